// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
import dev.labelprof.customlabels.CustomLabels;
import dev.labelprof.customlabels.OtelContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * dev.labelprof.customlabels against what libcustomlabels publishes (what a profiler
 * reads) on the thread: scopes, nesting, errors, tasks on other threads and pools, the
 * cache past its bound. Exits 1 on the first failure; tests/e2e/test_java_labels.py runs it.
 */
public final class CustomLabelsTest {
    private static int checks;

    private static void check(boolean ok, String what) {
        checks++;
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    /** The thread's published labels are exactly kv (key, value, ...). */
    private static void published(String what, String... kv) {
        check(CustomLabels.publishedCount() == kv.length / 2,
                what + ": " + CustomLabels.publishedCount() + " labels published, expected "
                        + kv.length / 2 + " " + List.of(kv));
        for (int i = 0; i < kv.length; i += 2) {
            String v = CustomLabels.published(kv[i]);
            check(kv[i + 1].equals(v), what + ": " + kv[i] + "=" + v + ", expected " + kv[i + 1]);
        }
        Map<String, String> cur = CustomLabels.current();
        check(cur.size() == kv.length / 2, what + ": current() " + cur);
        for (int i = 0; i < kv.length; i += 2) {
            check(kv[i + 1].equals(cur.get(kv[i])), what + ": current() " + cur);
        }
    }

    private static void expect(Class<? extends Throwable> type, Runnable r, String what) {
        try {
            r.run();
        } catch (Throwable t) {
            check(type.isInstance(t), what + ": threw " + t);
            return;
        }
        check(false, what + ": did not throw " + type.getSimpleName());
    }

    static void scopes() {
        published("no scope");
        try (var a = CustomLabels.with("tenant", "acme", "endpoint", "/search")) {
            published("outer", "tenant", "acme", "endpoint", "/search");
            try (var b = CustomLabels.with("tenant", "globex", "job", "reindex")) {
                published("inner", "tenant", "globex", "endpoint", "/search", "job", "reindex");
                try (var c = CustomLabels.with("k1", "1", "k2", "2", "k3", "ü")) {
                    published("varargs", "tenant", "globex", "endpoint", "/search", "job",
                            "reindex", "k1", "1", "k2", "2", "k3", "ü");
                }
            }
            published("inner closed", "tenant", "acme", "endpoint", "/search");
            try (var same = CustomLabels.with("tenant", "acme")) {
                published("same labels again", "tenant", "acme", "endpoint", "/search");
            }
        }
        published("outer closed");
        try (var empty = CustomLabels.with("", "empty key", "k", "")) {
            published("empty key and value", "", "empty key", "k", "");
        }
        var s = CustomLabels.with("a", "1");
        s.close();
        try (var t = CustomLabels.with("b", "2")) {
            s.close();
            published("second close does nothing", "b", "2");
        }
        published("all closed");
    }

    static void errors() throws Exception {
        try (var a = CustomLabels.with("tenant", "acme")) {
            expect(IllegalArgumentException.class, () -> CustomLabels.with("k", "v", "odd"),
                    "odd strings");
            expect(NullPointerException.class, () -> CustomLabels.with("k", null), "null value");
            expect(IllegalArgumentException.class,
                    () -> CustomLabels.with("long", "x".repeat(257)), "value over 256 bytes");
            String[] many = new String[34];
            for (int i = 0; i < many.length; i += 2) {
                many[i] = "key" + i;
                many[i + 1] = "v";
            }
            expect(IllegalArgumentException.class, () -> CustomLabels.with(many), "17 labels");
            expect(IllegalArgumentException.class,
                    () -> OtelContext.attach(new byte[16], new byte[8], 1, "unknown", "v"),
                    "an attribute key not published");
            expect(IllegalArgumentException.class,
                    () -> OtelContext.attach(new byte[15], new byte[8], 1), "a short trace id");
            expect(NullPointerException.class, () -> OtelContext.attach(null, new byte[8], 1),
                    "no trace id");
            OtelContext.publish(Map.of("service.name", "test"), List.of("http.route"));
            try (var o = OtelContext.attach(new byte[16], new byte[8], 1, "http.route", "/x")) {
                try (var p = OtelContext.attach(new byte[16], new byte[8], 0)) {
                    published("OTel context scopes leave custom labels alone", "tenant", "acme");
                }
            }
            published("after errors", "tenant", "acme");
            var other = CustomLabels.with("x", "y");
            Thread t = new Thread(() -> expect(IllegalStateException.class, other::close,
                    "close on another thread"));
            t.start();
            t.join();
            published("a scope closed elsewhere stays open", "tenant", "acme", "x", "y");
            other.close();
        }
        published("errors closed");
    }

    /** Threads sharing prepared sets, each checking its own labels. */
    static void threads() throws Exception {
        List<Thread> ts = new ArrayList<>();
        List<Throwable> failed = new ArrayList<>();
        CountDownLatch go = new CountDownLatch(1);
        for (int n = 0; n < 4; n++) {
            String me = "t" + n;
            Thread t = new Thread(() -> {
                try {
                    go.await();
                    for (int i = 0; i < 20000; i++) {
                        try (var a = CustomLabels.with("tenant", "t" + (i % 3))) {
                            try (var b = CustomLabels.with("thread", me)) {
                                String tenant = CustomLabels.published("tenant");
                                if (!me.equals(CustomLabels.published("thread"))
                                        || !("t" + (i % 3)).equals(tenant)) {
                                    throw new AssertionError(me + " sees another's labels");
                                }
                            }
                        }
                    }
                    published(me + " done");
                } catch (Throwable e) {
                    synchronized (failed) {
                        failed.add(e);
                    }
                }
            });
            ts.add(t);
            t.start();
        }
        go.countDown();
        for (Thread t : ts) {
            t.join();
        }
        check(failed.isEmpty(), "threads: " + failed);
    }

    /** Tasks run with their submitter's labels; the pool thread gets its own back. */
    static void pools() throws Exception {
        ExecutorService inner = Executors.newSingleThreadExecutor(r -> new Thread(() -> {
            try (var own = CustomLabels.with("role", "worker")) {
                r.run();
            }
        }));
        ExecutorService pool = CustomLabels.wrap(inner);
        inner.submit(() -> published("pool thread's own labels", "role", "worker")).get();
        try (var a = CustomLabels.with("tenant", "acme")) {
            pool.submit(() -> published("runnable task", "tenant", "acme")).get();
            Future<String> f = pool.submit(() -> CustomLabels.published("tenant"));
            check("acme".equals(f.get()), "callable task: tenant=" + f.get());
            Future<?> boom = pool.submit(() -> {
                throw new IllegalStateException("task fails");
            });
            try {
                boom.get();
                check(false, "a failing task did not fail");
            } catch (java.util.concurrent.ExecutionException e) {
                check(e.getCause() instanceof IllegalStateException, "failing task: " + e);
            }
            try (var b = CustomLabels.with("endpoint", "/a")) {
                List<Callable<String>> tasks = List.of(() -> CustomLabels.published("endpoint"));
                check("/a".equals(pool.invokeAll(tasks).get(0).get()), "invokeAll");
            }
            inner.submit(() -> published("restored after tasks", "role", "worker")).get();
            Runnable later = CustomLabels.wrap(() -> published("wrapped", "tenant", "acme"));
            Callable<String> call = CustomLabels.wrap(() -> CustomLabels.published("tenant"));
            Thread t = new Thread(() -> {
                try (var own = CustomLabels.with("role", "other")) {
                    later.run();
                    try {
                        check("acme".equals(call.call()), "wrapped callable");
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                    published("wrapped task restored", "role", "other");
                }
            });
            t.start();
            t.join();
        }
        // unlabelled submitter: the task runs without labels, not with the worker's
        pool.submit(() -> published("unlabelled submitter")).get();
        inner.submit(() -> published("restored", "role", "worker")).get();
        pool.shutdown();
    }

    /** More distinct sets than the cache holds: each still right, then again. */
    static void cache() {
        for (int round = 0; round < 2; round++) {
            for (int i = 0; i < 10000; i++) {
                try (var a = CustomLabels.with("request", "r" + i)) {
                    if (i % 997 == 0) {
                        published("set " + i, "request", "r" + i);
                    }
                }
            }
            System.gc();
        }
        published("cache done");
    }

    public static void main(String[] args) throws Exception {
        scopes();
        errors();
        threads();
        pools();
        cache();
        System.out.println("CustomLabelsTest: " + checks + " checks passed");
    }
}
