// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// golabels: goroutines that switch pprof label sets (pprof.Do) every few
// milliseconds and burn CPU in one function per set (burnSetK; burnUnlabelled
// outside any pprof.Do), measuring the thread CPU time of every burn. Each
// goroutine is locked to its thread, so that thread CPU time is its own. The
// report has groundtruth's format (tests/workloads/groundtruth.c): the sets
// with their exact labels and functions, and every interval.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// The label sets overlap on purpose (same keys, other values; a subset; a
// superset), so that a stale or merged set shows up as a wrong set. Set 3
// has more than 8 labels: its map has two buckets (Go <= 1.23).
var sets = [][]string{
	{"tenant", "acme", "endpoint", "/checkout"},
	{"tenant", "globex", "endpoint", "/checkout"},
	{"tenant", "acme"},
	{"k0", "v0", "k1", "v1", "k2", "v2", "k3", "v3", "k4", "v4", "k5", "v5",
		"k6", "v6", "k7", "v7", "k8", "v8", "k9", "v9", "k10", "v10"},
}

var sink uint64

func spin(ns int64) {
	t0 := threadCPU()
	x := sink
	for threadCPU()-t0 < ns {
		for i := 0; i < 2000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	sink = x
}

//go:noinline
func burnSet0(ns int64) { spin(ns) }

//go:noinline
func burnSet1(ns int64) { spin(ns) }

//go:noinline
func burnSet2(ns int64) { spin(ns) }

//go:noinline
func burnSet3(ns int64) { spin(ns) }

//go:noinline
func burnUnlabelled(ns int64) { spin(ns) }

var burns = []func(int64){burnSet0, burnSet1, burnSet2, burnSet3}

var burnNames = []string{"main.burnSet0", "main.burnSet1", "main.burnSet2", "main.burnSet3"}

func clockNs(clock uintptr) int64 {
	var ts syscall.Timespec
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clock, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

const (
	clockRealtime  = 0
	clockThreadCPU = 3
)

func threadCPU() int64 { return clockNs(clockThreadCPU) }

// One burn: {tid, set (-1: unlabelled), realtime start, end, thread CPU ns}.
type interval [5]int64

func worker(id int, stop *int32, lo, hi int64, out *[]interval, wg *sync.WaitGroup) {
	defer wg.Done()
	runtime.LockOSThread()
	tid := int64(syscall.Gettid())
	rng := rand.New(rand.NewSource(int64(id) + 1))
	ctx := context.Background()
	for k := 0; ; k++ {
		if atomic.LoadInt32(stop) != 0 {
			return
		}
		set := k%(len(sets)+1) - 1
		ns := lo + rng.Int63n(hi-lo+1)
		rt0, cpu0 := clockNs(clockRealtime), threadCPU()
		if set < 0 {
			burnUnlabelled(ns)
		} else {
			pprof.Do(ctx, pprof.Labels(sets[set]...), func(context.Context) { burns[set](ns) })
		}
		cpu1, rt1 := threadCPU(), clockNs(clockRealtime)
		*out = append(*out, interval{tid, int64(set), rt0, rt1, cpu1 - cpu0})
	}
}

func main() {
	threads := flag.Int("threads", 2, "burning goroutines (each on its own thread)")
	burnRange := flag.String("interval", "1000,5000", "burn length range LO,HI in microseconds")
	duration := flag.Float64("duration", 0, "seconds to run (0: until stdin ends)")
	output := flag.String("output", "", "where to write the JSON report")
	flag.Parse()
	var lo, hi int64
	if _, err := fmt.Sscanf(*burnRange, "%d,%d", &lo, &hi); err != nil || lo <= 0 || hi < lo {
		fmt.Fprintln(os.Stderr, "golabels: --interval LO,HI in microseconds")
		os.Exit(2)
	}
	lo, hi = lo*1000, hi*1000

	var stop int32
	var wg sync.WaitGroup
	results := make([][]interval, *threads)
	start := clockNs(clockRealtime)
	for i := 0; i < *threads; i++ {
		wg.Add(1)
		go worker(i, &stop, lo, hi, &results[i], &wg)
	}
	fmt.Fprintf(os.Stderr, "golabels: ready pid=%d\n", os.Getpid())
	if *duration > 0 {
		time.Sleep(time.Duration(*duration * float64(time.Second)))
	} else {
		io.Copy(io.Discard, bufio.NewReader(os.Stdin))
	}
	atomic.StoreInt32(&stop, 1)
	wg.Wait()
	end := clockNs(clockRealtime)
	if *output == "" {
		return
	}
	type set struct {
		ID       int               `json:"id"`
		Function string            `json:"function"`
		Labels   map[string]string `json:"labels"`
	}
	report := struct {
		Pid        int               `json:"pid"`
		GoVersion  string            `json:"go_version"`
		Start      int64             `json:"start_ns"`
		End        int64             `json:"end_ns"`
		Sets       []set             `json:"sets"`
		Unlabelled map[string]string `json:"unlabelled"`
		Intervals  []interval        `json:"intervals"`
	}{Pid: os.Getpid(), GoVersion: runtime.Version(), Start: start, End: end,
		Unlabelled: map[string]string{"function": "main.burnUnlabelled"}, Intervals: []interval{}}
	for i, kv := range sets {
		labels := map[string]string{}
		for j := 0; j < len(kv); j += 2 {
			labels[kv[j]] = kv[j+1]
		}
		report.Sets = append(report.Sets, set{i, burnNames[i], labels})
	}
	for _, r := range results {
		report.Intervals = append(report.Intervals, r...)
	}
	f, err := os.Create(*output)
	if err == nil {
		err = json.NewEncoder(f).Encode(report)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "golabels:", err)
		os.Exit(1)
	}
}
