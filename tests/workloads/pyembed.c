// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pyembed: a C program embedding CPython (linked with libpython, not run as
 * python3), running a script as __main__ the way applications do: the
 * interpreter initialised from a config, the file run by PyRun_SimpleFile.
 *
 *     pyembed SCRIPT [ARG...]      sys.argv is SCRIPT ARG...
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	PyConfig config;
	PyStatus status;
	FILE *f;
	int ret;

	if (argc < 2) {
		fprintf(stderr, "usage: %s SCRIPT [ARG...]\n", argv[0]);
		return 2;
	}
	PyConfig_InitPythonConfig(&config);
	/* the arguments are the script's: none is an option of the interpreter */
	config.parse_argv = 0;
	status = PyConfig_SetBytesArgv(&config, argc - 1, argv + 1);
	if (!PyStatus_Exception(status))
		status = Py_InitializeFromConfig(&config);
	PyConfig_Clear(&config);
	if (PyStatus_Exception(status))
		Py_ExitStatusException(status);
	f = fopen(argv[1], "r");
	if (!f) {
		perror(argv[1]);
		Py_FinalizeEx();
		return 1;
	}
	ret = PyRun_SimpleFileExFlags(f, argv[1], 1, NULL);
	if (Py_FinalizeEx() < 0)
		ret = -1;
	return ret ? 1 : 0;
}
