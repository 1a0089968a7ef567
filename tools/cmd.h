/* cmd.h — the subcommands of the `taskhop` command, one file each (tools/cmd_NAME.c).
 * Each returns the process exit status: 0 ok, 1 failure, 2 bad usage. */
#ifndef TASKHOP_CMD_H
#define TASKHOP_CMD_H

int cmd_list(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_record(int argc, char **argv);  /* tools/cmd_record.c, with the recorder */

#endif
