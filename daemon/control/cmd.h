/*
 * cmd is the daemon's side of the control commands: it has a handler for
 * each row of common/command.c's table, indexed by its id. Adding a
 * command is one row there and one handler here. Its callers (control.c
 * through the callbacks daemon.c gives it, daemon.c itself) tell it what
 * happened; it asks for a reload or a shutdown through struct daemon's
 * hooks. Every function here runs in the loop.
 */
#ifndef PERFSPILL_CMD_H
#define PERFSPILL_CMD_H

#include <json-c/json.h>

struct daemon;
struct control_client;

/* Run cmd with args for client c; the handler replies now or later. */
void	cmd_dispatch(struct daemon *, struct control_client *,
	    const char *cmd, json_object *args);
/* The client is going away: drop anything that would answer it later. */
void	cmd_client_gone(struct daemon *, struct control_client *);

/* The configured settings changed (configure, reload): hand the live
 * ones, with the overrides on top, to the default recording in progress,
 * and the retention to the on-demand sessions. */
void	cmd_settings_changed(struct daemon *);
/* Would cfg, made the configured settings (a reload), keep the default
 * recording in progress, with its overrides, within the memory budget
 * (cfg's max_memory)? 0, or -1 with err naming the figures. */
struct config;
struct config_error;
int	cmd_settings_fit(struct daemon *, const struct config *cfg,
	    struct config_error *err);

/* A file was closed (record_finish_ops' file_done): answers the rotates
 * waiting for it. */
void	cmd_file_done(struct daemon *, const char *file, int whole);
/* Another whole file's JIT copy is done (d->files_copied): the replies
 * that waited for it go out, and an exit waiting for it goes on. */
void	cmd_files_copied(struct daemon *);

struct session;
/* A session's stop has finished (session_hooks.stopped): answers the
 * clients waiting for it and leaves the loop when the daemon is shutting
 * down and no session is busy. arg is the daemon. */
void	cmd_stopped(struct session *, const char *file, void *arg);

#endif
