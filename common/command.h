/*
 * command: the control commands as data, shared by perfspilld (dispatch,
 * privilege, whether args are taken) and perfspillctl (parsing, usage,
 * help), so that a command is written down once. The daemon's handlers
 * are indexed by enum command_id; start's options are the request keys
 * of the config schema, each row of which carries its option letter,
 * value name and help (config_key_at).
 */
#ifndef PERFSPILL_COMMAND_H
#define PERFSPILL_COMMAND_H

#include <stddef.h>

enum command_id {
	COMMAND_PING,
	COMMAND_VERSION,
	COMMAND_STATUS,
	COMMAND_START,
	COMMAND_STOP,
	COMMAND_CONFIGURE,
	COMMAND_ROTATE,
	COMMAND_RELOAD,
	COMMAND_SHUTDOWN,
	COMMAND_METRICS,
	COMMAND_SNAPSHOT,
	COMMAND_FLUSH,
	COMMAND__COUNT
};

enum command_args {
	COMMAND_ARGS_NONE,	/* args must be empty */
	COMMAND_ARGS_SETTINGS,	/* args are settings (config keys) */
	COMMAND_ARGS_SESSION,	/* args: at most "session" */
	COMMAND_ARGS_STOP,	/* args: at most "session" and "discard" */
};

struct command {
	enum command_id		 id;
	const char		*name;
	int			 privileged;	/* root or a control group */
	enum command_args	 args;
	const char		*usage;		/* after "perfspillctl NAME" */
	const char		*summary;	/* one line for the overview */
	const char		*help;		/* the per-command help */
};

extern const struct command	command_table[COMMAND__COUNT];

/* NULL when there is no such command. */
const struct command	*command_find(const char *name);
/* Does c take key in its args? For COMMAND_ARGS_SETTINGS the config
 * schema decides (not this). */
int			 command_takes(const struct command *c,
			    const char *key);
/* What c's args may hold, for an error message ("no arguments"). */
const char		*command_args_words(const struct command *c);
/* "ping, version, ..." for error messages. */
const char		*command_names(void);

#endif
