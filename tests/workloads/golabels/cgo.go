// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

//go:build cgo

// With cgo, the program links the C runtime (externally, by the system
// linker): g then lives in the initial-exec TLS block (runtime.tlsg on
// amd64, runtime.tls_g on arm64), beside the C code's own thread-local
// variables.
package main

/*
static __thread long c_tls_counter;
static __thread char c_tls_buffer[64];

static long c_touch_tls(void)
{
	c_tls_buffer[0]++;
	return ++c_tls_counter;
}
*/
import "C"

func init() { C.c_touch_tls() }
