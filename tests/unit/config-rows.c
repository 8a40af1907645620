/*
 * config-rows: the rows of the config schema and of the command table as
 * JSON, for docs-check.py, which holds the man pages and
 * docs/protocol.md to them. Printed from the very tables perfspilld and
 * perfspillctl are built from.
 */
#include <stdio.h>

#include <json-c/json.h>

#include "command.h"
#include "config.h"

static json_object *
rows_str(const char *s)
{
	return s != NULL ? json_object_new_string(s) : NULL;
}

int
main(void)
{
	static const char	*kinds[] = {
		[CONFIG_KIND_VALUE] = "value", [CONFIG_KIND_SIZE] = "size",
		[CONFIG_KIND_SECS] = "duration", [CONFIG_KIND_BOOL] = "boolean",
		[CONFIG_KIND_LIST] = "list", [CONFIG_KIND_OBJECTS] = "objects",
	};
	static const char	*whens[] = {
		[CONFIG_LIVE] = "live", [CONFIG_NEXT_START] = "next start",
		[CONFIG_DAEMON] = "daemon",
	};
	struct config_keyinfo	 k;
	json_object		*o, *keys, *cmds, *r;
	char			 opt[2] = "";
	size_t			 i;

	o = json_object_new_object();
	keys = json_object_new_array();
	for (i = 0; config_key_at(i, &k) == 0; i++) {
		r = json_object_new_object();
		opt[0] = (char)k.opt;
		json_object_object_add(r, "name", rows_str(k.name));
		json_object_object_add(r, "kind", rows_str(kinds[k.kind]));
		json_object_object_add(r, "when", rows_str(whens[k.when]));
		json_object_object_add(r, "default", rows_str(k.def));
		json_object_object_add(r, "opt", rows_str(k.opt ? opt : NULL));
		json_object_object_add(r, "alias", rows_str(k.alias));
		json_object_object_add(r, "metavar", rows_str(k.metavar));
		json_object_object_add(r, "help", rows_str(k.help));
		json_object_array_add(keys, r);
	}
	cmds = json_object_new_array();
	for (i = 0; i < COMMAND__COUNT; i++) {
		r = json_object_new_object();
		json_object_object_add(r, "name",
		    rows_str(command_table[i].name));
		json_object_object_add(r, "usage",
		    rows_str(command_table[i].usage));
		json_object_array_add(cmds, r);
	}
	json_object_object_add(o, "keys", keys);
	json_object_object_add(o, "commands", cmds);
	printf("%s\n", json_object_to_json_string_ext(o,
	    JSON_C_TO_STRING_PRETTY));
	json_object_put(o);
	return 0;
}
