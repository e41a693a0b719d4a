/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Demangled names of C++ (Itanium ABI) and Rust (legacy and v0) symbols, with
 * libiberty's demangler, in perf's default style: without parameters, Rust's
 * legacy hash left out ("JavaCalls::call_helper", "core::fmt::write").
 */
#ifndef LABELPROF_DEMANGLE_H
#define LABELPROF_DEMANGLE_H

/*
 * Longer names stay mangled: they come from untrusted files, and demangling
 * takes time and memory that grow with them.
 */
#define SYM_DEMANGLE_MAX 16384

/*
 * The demangled form of name (malloc'd), or NULL when name is not a C++ or
 * Rust symbol, is longer than SYM_DEMANGLE_MAX bytes, or memory runs out.
 */
char *sym_demangle(const char *name);

#endif /* LABELPROF_DEMANGLE_H */
