/*
 * command: the control commands as data, shared by perfspilld (dispatch,
 * privilege, whether args are taken) and perfspillctl (parsing, usage,
 * help), so that a command is written down once. The daemon's handlers
 * are indexed by enum command_id; start's options are derived from the
 * request keys of the config schema (config_key_at) plus the short
 * letters and help text of command_opts.
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
	COMMAND__COUNT
};

enum command_args {
	COMMAND_ARGS_NONE,	/* args must be empty */
	COMMAND_ARGS_SETTINGS,	/* args are settings (config keys) */
	COMMAND_ARGS_SESSION,	/* args: at most "session" */
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
/* "ping, version, ..." for error messages. */
const char		*command_names(void);

/*
 * How start (and the help) present a request key of the config schema:
 * an optional short letter, an extra long name, the value's name and a
 * line of help. Keys without a row still become options (--KEY-NAME).
 */
struct command_opt {
	const char	*key;
	int		 shortopt;	/* 0: none */
	const char	*alias;		/* another long name, or NULL */
	const char	*metavar;	/* NULL for booleans */
	const char	*help;
};

/* The row for a config key, or NULL. */
const struct command_opt	*command_opt_find(const char *key);
/* Row i of the presentation table, NULL past the end (for tests). */
const struct command_opt	*command_opt_at(size_t i);

#endif
