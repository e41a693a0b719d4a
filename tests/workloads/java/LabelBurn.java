// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
import dev.labelprof.customlabels.CustomLabels;
import dev.labelprof.customlabels.OtelContext;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Ground truth for Java labels (tests/e2e/test_java_labels.py): platform threads and the
 * tasks of a thread pool burn CPU in burnN only under label set N, switching every few
 * milliseconds; set 3 also has an OpenTelemetry thread context. Platform threads burn in
 * burnNone without labels in between, pool threads in burnPool with their own labels
 * after each task. Writes the sets and each burn's thread, wall time and CPU time.
 *   java -cp customlabels.jar:labelburn.jar LabelBurn --output FILE
 *       [--threads N] [--pool N] [--interval MIN_US,MAX_US] [--start-delay-ms N]
 *       [--duration S | --wait-stdin]
 */
public final class LabelBurn {
    static final String[][] SETS = {
        {"set", "0", "tenant", "acme"},
        {"set", "1", "tenant", "globex", "endpoint", "/search"},
        {"set", "2", "tenant", "initech"},
        {"set", "3", "tenant", "umbrella", "endpoint", "/checkout"},
    };
    static final String[] FUNCTIONS = {"burn0", "burn1", "burn2", "burn3"};
    static final String[] POOL_LABELS = {"role", "pool"};
    static final String[] RESOURCE = {"service.name", "labelburn"};
    static final byte[] TRACE_ID = hex("0af7651916cd43dd8448eb211c80319c");
    static final byte[] SPAN_ID = hex("b7ad6b7169203331");
    static final String ROUTE = "/api/items";

    static final ThreadMXBean MX = ManagementFactory.getThreadMXBean();
    static final long EPOCH_NS = epochNs() - System.nanoTime();
    static final List<long[]> INTERVALS = new ArrayList<>();
    static volatile boolean stop;
    static long sink;

    static byte[] hex(String s) {
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }

    static long epochNs() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

    static long tid() {
        try {
            String link = Files.readSymbolicLink(Path.of("/proc/thread-self")).toString();
            return Long.parseLong(link.substring(link.lastIndexOf('/') + 1));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    // One method per set, each with its own constants (its own compiled code); the
    // clock is read every few thousand steps so that few samples land in it.
    static long burn0(long until) {
        long x = 1;
        do {
            for (int i = 0; i < 4096; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
        } while (System.nanoTime() < until);
        return x;
    }

    static long burn1(long until) {
        long x = 3;
        do {
            for (int i = 0; i < 4096; i++) {
                x = x * 2862933555777941757L + 3037000493L;
            }
        } while (System.nanoTime() < until);
        return x;
    }

    static long burn2(long until) {
        long x = 5;
        do {
            for (int i = 0; i < 4096; i++) {
                x = (x ^ (x >>> 7)) * 0x9E3779B97F4A7C15L;
            }
        } while (System.nanoTime() < until);
        return x;
    }

    static long burn3(long until) {
        long x = 7;
        do {
            for (int i = 0; i < 4096; i++) {
                x = (x ^ (x << 13)) + 0xBF58476D1CE4E5B9L;
            }
        } while (System.nanoTime() < until);
        return x;
    }

    static long burnNone(long until) {
        long x = 9;
        do {
            for (int i = 0; i < 4096; i++) {
                x = (x + 0x94D049BB133111EBL) ^ (x >>> 3);
            }
        } while (System.nanoTime() < until);
        return x;
    }

    static long burnPool(long until) {
        long x = 11;
        do {
            for (int i = 0; i < 4096; i++) {
                x = x * 0xD1342543DE82EF95L + 1;
            }
        } while (System.nanoTime() < until);
        return x;
    }

    static long burn(int k, long ns) {
        long until = System.nanoTime() + ns;
        switch (k) {
        case 0: return burn0(until);
        case 1: return burn1(until);
        case 2: return burn2(until);
        case 3: return burn3(until);
        case 4: return burnNone(until);
        default: return burnPool(until);
        }
    }

    /** Burns in function k for ns and records it; set 3 runs in its OTel context. */
    static void timed(long tid, int k, long ns) {
        long cpu = MX.getCurrentThreadCpuTime(), start = System.nanoTime();
        long x;
        if (k == 3) {
            try (var s = OtelContext.attach(TRACE_ID, SPAN_ID, 1, "http.route", ROUTE)) {
                x = burn(k, ns);
            }
        } else {
            x = burn(k, ns);
        }
        long end = System.nanoTime(), used = MX.getCurrentThreadCpuTime() - cpu;
        synchronized (INTERVALS) {
            sink += x;
            INTERVALS.add(new long[] {tid, k, EPOCH_NS + start, EPOCH_NS + end, used});
        }
    }

    /** timed() under the labels of function k. */
    static void labelled(long tid, int k, long ns) {
        String[] labels = k < SETS.length ? SETS[k] : k == SETS.length + 1 ? POOL_LABELS : null;
        if (labels == null) {
            timed(tid, k, ns);
            return;
        }
        try (var s = CustomLabels.with(labels)) {
            timed(tid, k, ns);
        }
    }

    static long pick(Random r, long[] interval) {
        return 1000 * (interval[0] + (long) r.nextInt((int) (interval[1] - interval[0] + 1)));
    }

    public static void main(String[] args) throws Exception {
        int threads = 2, poolSize = 2;
        long[] interval = {1000, 5000};
        double duration = 0;
        boolean waitStdin = false;
        long startDelayMs = 0;
        String output = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
            case "--threads": threads = Integer.parseInt(args[++i]); break;
            case "--pool": poolSize = Integer.parseInt(args[++i]); break;
            case "--interval":
                String[] mm = args[++i].split(",");
                interval = new long[] {Long.parseLong(mm[0]), Long.parseLong(mm[1])};
                break;
            case "--duration": duration = Double.parseDouble(args[++i]); break;
            case "--wait-stdin": waitStdin = true; break;
            case "--start-delay-ms": startDelayMs = Long.parseLong(args[++i]); break;
            case "--output": output = args[++i]; break;
            default:
                System.err.println("LabelBurn: unknown argument " + args[i]);
                System.exit(2);
            }
        }
        if (output == null) {
            System.err.println("LabelBurn: --output FILE is required");
            System.exit(2);
        }
        OtelContext.publish(Map.of(RESOURCE[0], RESOURCE[1]), List.of("http.route"));
        // a profiler that saw the JVM start inspects it again once the library is loaded
        Thread.sleep(startDelayMs);
        // compiled code for every burn function before the threads start
        long mainTid = tid();
        for (int n = 0; n < 200; n++) {
            for (int k = 0; k < SETS.length + 2; k++) {
                labelled(mainTid, k, 200_000);
            }
        }

        List<Thread> all = new ArrayList<>();
        final long[] iv = interval;
        for (int t = 0; t < threads; t++) {
            final long seed = t;
            all.add(new Thread(() -> {
                long tid = tid();
                Random r = new Random(seed);
                while (!stop) {
                    labelled(tid, r.nextInt(SETS.length + 1), pick(r, iv));
                }
            }, "burner-" + t));
        }

        // The pool: tasks carry the submitter's labels; each thread burns under its own
        // labels after every task (afterExecute runs once the task's labels are restored).
        ThreadPoolExecutor inner = new ThreadPoolExecutor(poolSize, poolSize, 0,
                TimeUnit.SECONDS, new LinkedBlockingQueue<>(), run -> new Thread(() -> {
                    try (var own = CustomLabels.with(POOL_LABELS)) {
                        run.run();
                    }
                }, "pool")) {
            final ThreadLocal<Long> tid = ThreadLocal.withInitial(LabelBurn::tid);
            final ThreadLocal<Random> rnd = ThreadLocal.withInitial(Random::new);

            @Override
            protected void afterExecute(Runnable task, Throwable t) {
                timed(tid.get(), SETS.length + 1, pick(rnd.get(), iv) / 4);
            }
        };
        ExecutorService pool = CustomLabels.wrap(inner);
        Semaphore inFlight = new Semaphore(2 * poolSize);
        all.add(new Thread(() -> {
            Random r = new Random(99);
            try {
                while (!stop) {
                    inFlight.acquire();
                    int k = r.nextInt(SETS.length);
                    long ns = pick(r, iv);
                    try (var s = CustomLabels.with(SETS[k])) {
                        pool.execute(() -> {
                            timed(tid(), k, ns);
                            inFlight.release();
                        });
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "submitter"));

        System.err.println("LabelBurn: ready pid=" + ProcessHandle.current().pid());
        for (Thread t : all) {
            t.start();
        }
        if (waitStdin) {
            while (System.in.read() >= 0) {
                // until stdin closes
            }
        } else {
            Thread.sleep((long) (duration * 1000));
        }
        stop = true;
        for (Thread t : all) {
            t.join();
        }
        pool.shutdown();
        pool.awaitTermination(10, TimeUnit.SECONDS);
        write(output);
        System.exit(0);
    }

    static String json(String[] kv) {
        StringBuilder b = new StringBuilder("{");
        for (int i = 0; i < kv.length; i += 2) {
            b.append(i > 0 ? "," : "").append('"').append(kv[i]).append("\":\"")
                    .append(kv[i + 1]).append('"');
        }
        return b.append('}').toString();
    }

    static void write(String output) throws IOException {
        try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(Path.of(output)))) {
            w.printf("{\"pid\":%d,\"resource\":%s,%n", ProcessHandle.current().pid(),
                    json(RESOURCE));
            w.printf("\"otel\":{\"set\":3,\"trace_id\":\"0af7651916cd43dd8448eb211c80319c\","
                    + "\"span_id\":\"b7ad6b7169203331\",\"http.route\":\"%s\"},%n", ROUTE);
            w.print("\"sets\":[");
            for (int k = 0; k < SETS.length; k++) {
                w.printf("%s{\"id\":%d,\"function\":\"%s\",\"labels\":%s}", k > 0 ? "," : "", k,
                        FUNCTIONS[k], json(SETS[k]));
            }
            w.printf("],%n\"unlabelled\":{\"id\":%d,\"function\":\"burnNone\",\"labels\":{}},%n",
                    SETS.length);
            w.printf("\"pool\":{\"id\":%d,\"function\":\"burnPool\",\"labels\":%s},%n",
                    SETS.length + 1, json(POOL_LABELS));
            w.print("\"intervals\":[");
            synchronized (INTERVALS) {
                for (int i = 0; i < INTERVALS.size(); i++) {
                    long[] v = INTERVALS.get(i);
                    w.printf("%s[%d,%d,%d,%d,%d]", i > 0 ? ",\n" : "", v[0], v[1], v[2], v[3],
                            v[4]);
                }
            }
            w.println("]}");
        }
    }
}
