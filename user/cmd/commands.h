/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The labelprof commands. Each takes the arguments after the command word,
 * argv[0] being "labelprof COMMAND" (argp names the program after it), and
 * returns the process exit status.
 */
#ifndef LABELPROF_COMMANDS_H
#define LABELPROF_COMMANDS_H

int cmd_record(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_agent(int argc, char **argv);
int cmd_labels(int argc, char **argv);
int cmd_inspect(int argc, char **argv);

#endif /* LABELPROF_COMMANDS_H */
