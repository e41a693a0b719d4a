// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

//go:build cgo

// With cgo, the program links the C runtime (externally, by the system
// linker): g then lives in the initial-exec TLS block, as runtime.tlsg.
package main

import "C"
