/*
 * test-command: the one command table and start's options, which come
 * from the config schema's rows. perfspilld dispatches and perfspillctl
 * parses from these rows, so a setting without its help, a boolean with
 * a value, or two options on one letter would break one side quietly.
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
		/* only the readers are open to every peer (flush puts on
		 * disk what a reader is about to read, and changes nothing) */
		CHECK_EQ(c->privileged, !(c->id == COMMAND_PING ||
		    c->id == COMMAND_VERSION || c->id == COMMAND_STATUS ||
		    c->id == COMMAND_METRICS || c->id == COMMAND_FLUSH));
		CHECK_EQ(c->args == COMMAND_ARGS_SETTINGS,
		    c->id == COMMAND_START || c->id == COMMAND_CONFIGURE);
		CHECK(strstr(command_names(), c->name) != NULL);
	}
	/* what the daemon's dispatch lets through to a handler */
	CHECK(command_takes(command_find("stop"), "session"));
	CHECK(command_takes(command_find("stop"), "discard"));
	CHECK(!command_takes(command_find("stop"), "freq"));
	CHECK(command_takes(command_find("snapshot"), "session"));
	CHECK(!command_takes(command_find("snapshot"), "discard"));
	CHECK(command_takes(command_find("rotate"), "session"));
	CHECK(!command_takes(command_find("rotate"), "discard"));
	CHECK(!command_takes(command_find("reload"), "session"));
	CHECK(command_takes(command_find("status"), "session"));
	CHECK(command_takes(command_find("flush"), "session"));
	CHECK(!command_takes(command_find("flush"), "discard"));
	CHECK(strcmp(command_args_words(command_find("ping")),
	    "no arguments") == 0);
	CHECK(command_find("shutdown") != NULL);
	CHECK(command_find("stat") == NULL);
	CHECK(command_find("") == NULL);
}

static void
test_start_options(void)
{
	struct config_keyinfo	 k, p;
	size_t			 i, j, nreq = 0;

	for (i = 0; config_key_at(i, &k) == 0; i++) {
		if (k.when == CONFIG_DAEMON) {
			/* no option: only the config file sets them */
			CHECK(k.opt == 0 && k.alias == NULL &&
			    k.metavar == NULL && k.help == NULL);
			continue;
		}
		nreq++;
		/* every setting a request may carry is an option with help */
		CHECK(k.help != NULL && k.help[0] != '\0' &&
		    k.help[strlen(k.help) - 1] != '\n');
		/* booleans are flags (--KEY / --no-KEY), the rest take one */
		CHECK_EQ(k.metavar == NULL, k.kind == CONFIG_KIND_BOOL);
		/* -h is help, -s the socket */
		CHECK(k.opt != 'h' && k.opt != 's');
		/* each letter and long name once */
		for (j = 0; j < i; j++) {
			config_key_at(j, &p);
			CHECK(k.opt == 0 || p.opt != k.opt);
			CHECK(k.alias == NULL || p.alias == NULL ||
			    strcmp(p.alias, k.alias) != 0);
		}
	}
	CHECK(nreq > 10);
	CHECK(config_key_at(1000, &k) == -1);
	CHECK(config_key_info("events", &k) == 0 && k.opt == 'e' &&
	    strcmp(k.alias, "event") == 0);
	CHECK(config_key_info("nosuchkey", &k) == -1);
}

int
main(void)
{
	test_commands();
	test_start_options();
	return check_exit();
}
