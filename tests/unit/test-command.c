/*
 * test-command: the one command table and the presentation of start's
 * options. perfspilld dispatches and perfspillctl parses from these rows,
 * so a row that names no setting, a setting without an option, or two
 * options on one letter would break one side quietly.
 */
#include <string.h>

#include "check.h"
#include "command.h"
#include "config.h"

static void
test_commands(void)
{
	const struct command	*c;
	size_t			 i, j;

	for (i = 0; i < COMMAND__COUNT; i++) {
		c = &command_table[i];
		/* the daemon indexes its handlers by id */
		CHECK_EQ(c->id, i);
		CHECK(command_find(c->name) == c);
		CHECK(c->usage != NULL && c->summary != NULL &&
		    c->help != NULL && c->help[strlen(c->help) - 1] == '\n');
		for (j = 0; j < i; j++)
			CHECK(strcmp(command_table[j].name, c->name) != 0);
		/* only the readers are open to every peer */
		CHECK_EQ(c->privileged, !(c->id == COMMAND_PING ||
		    c->id == COMMAND_VERSION || c->id == COMMAND_STATUS ||
		    c->id == COMMAND_METRICS));
		CHECK_EQ(c->args == COMMAND_ARGS_SETTINGS,
		    c->id == COMMAND_START || c->id == COMMAND_CONFIGURE);
		CHECK(strstr(command_names(), c->name) != NULL);
	}
	CHECK(command_find("shutdown") != NULL);
	CHECK(command_find("stat") == NULL);
	CHECK(command_find("") == NULL);
}

static void
test_start_options(void)
{
	const struct command_opt	*o, *p;
	struct config_keyinfo		 k;
	size_t				 i, j, nreq = 0, nrows = 0;

	/* every setting a request may carry has its option row */
	for (i = 0; config_key_at(i, &k) == 0; i++) {
		if (k.when == CONFIG_DAEMON)
			continue;
		nreq++;
		o = command_opt_find(k.name);
		CHECK(o != NULL);
		if (o == NULL) {
			printf("no option row for %s\n", k.name);
			continue;
		}
		/* booleans are flags (--KEY / --no-KEY), the rest take one */
		CHECK_EQ(o->metavar == NULL, k.kind == CONFIG_KIND_BOOL);
	}
	/* and every row names such a setting, once, on its own letter */
	for (i = 0; (o = command_opt_at(i)) != NULL; i++) {
		nrows++;
		for (j = 0; config_key_at(j, &k) == 0; j++)
			if (strcmp(k.name, o->key) == 0)
				break;
		CHECK(config_key_at(j, &k) == 0 && k.when != CONFIG_DAEMON);
		for (j = 0; j < i; j++) {
			p = command_opt_at(j);
			CHECK(strcmp(p->key, o->key) != 0);
			CHECK(o->shortopt == 0 || p->shortopt != o->shortopt);
		}
		/* -h is help, -s the socket */
		CHECK(o->shortopt != 'h' && o->shortopt != 's');
	}
	CHECK_EQ(nrows, nreq);
	CHECK(config_key_at(1000, &k) == -1);
}

int
main(void)
{
	test_commands();
	test_start_options();
	return check_exit();
}
