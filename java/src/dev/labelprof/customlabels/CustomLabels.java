// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
package dev.labelprof.customlabels;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;

/**
 * Custom labels for Java code, read by labelprof (or any reader of the Custom Labels ABI)
 * with every CPU sample of the thread:
 *
 * <pre>{@code
 * try (var s = CustomLabels.with("tenant", tenant, "endpoint", endpoint)) {
 *     handle(request);
 * }
 * ExecutorService pool = CustomLabels.wrap(Executors.newFixedThreadPool(8));
 * }</pre>
 *
 * <p>Labels are per thread. A scope adds labels (an inner scope adds keys and replaces
 * values) and its {@code close} restores the labels before it; scopes must be closed in
 * reverse order on the thread that opened them, which try-with-resources does. A task
 * wrapped with {@link #wrap(Runnable)}, {@link #wrap(Callable)} or submitted to a
 * {@link #wrap(ExecutorService) wrapped executor} runs with the labels of the thread that
 * wrapped or submitted it, and the thread that runs it gets its own back afterwards.
 *
 * <p>Each distinct label set becomes a prepared libcustomlabels set, made once and then
 * installed with one JNI call (a pointer store): the transitions of a scope are cached,
 * for up to {@value #CACHE_MAX} of them; a set no longer cached nor in use is freed. Label
 * values unique to each request (ids) make a new set every time: they belong in the
 * OpenTelemetry thread context ({@link OtelContext}), not here. Keys and values are
 * stored as UTF-8, within libcustomlabels' limits (16 labels, keys of 128 bytes, values
 * of 256 by default): beyond them {@code with} throws IllegalArgumentException.
 *
 * <p>The library owns the labels of the threads that use it: labels set on the same
 * thread through libcustomlabels' C API are replaced. Labels belong to platform threads:
 * a virtual thread's would stay on its carrier thread.
 */
public final class CustomLabels {
    /** Transitions (labels before, labels added) kept: a prepared set takes about 7 KiB. */
    static final int CACHE_MAX = 1024;

    private static final ThreadLocal<Current> CURRENT = ThreadLocal.withInitial(Current::new);
    private static final ConcurrentHashMap<Step, LabelSet> STEPS = new ConcurrentHashMap<>();

    private CustomLabels() {}

    /** The labels of one thread. */
    private static final class Current {
        final Thread thread = Thread.currentThread();
        LabelSet set = LabelSet.EMPTY;

        /**
         * Installs next; returns the set it replaces. The field changes after the swap:
         * a set stays reachable (not freed) while installed.
         */
        LabelSet install(LabelSet next) {
            LabelSet prev = set;
            Native.swap(next.handle);
            set = next;
            return prev;
        }
    }

    /** A transition: the set before and the labels added, as given. */
    private static final class Step {
        final LabelSet base;
        final String[] adds;
        final int hash;

        Step(LabelSet base, String[] adds) {
            this.base = base;
            this.adds = adds;
            this.hash = 31 * System.identityHashCode(base) + Arrays.hashCode(adds);
        }

        @Override
        public int hashCode() {
            return hash;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Step && ((Step) o).base == base
                    && Arrays.equals(((Step) o).adds, adds);
        }
    }

    /** The scope of labels added by {@code with}; {@code close} restores those before. */
    public static final class Scope implements AutoCloseable {
        private final Current current;
        private final LabelSet prev;
        private boolean closed;

        Scope(Current current, LabelSet prev) {
            this.current = current;
            this.prev = prev;
        }

        /**
         * Restores the labels the thread had when the scope opened. A second close does
         * nothing.
         *
         * @throws IllegalStateException on another thread than the one that opened it
         */
        @Override
        public void close() {
            if (closed) {
                return;
            }
            if (Thread.currentThread() != current.thread) {
                throw new IllegalStateException("a labels scope closed on another thread");
            }
            closed = true;
            current.install(prev);
        }
    }

    /** The thread's labels plus key=value until the scope closes. */
    public static Scope with(String key, String value) {
        return enter(new String[] {key, value});
    }

    /** The thread's labels plus k1=v1 and k2=v2 until the scope closes. */
    public static Scope with(String k1, String v1, String k2, String v2) {
        return enter(new String[] {k1, v1, k2, v2});
    }

    /**
     * The thread's labels plus these until the scope closes: key, value, key, value, ...
     * (a key given twice takes its last value).
     */
    public static Scope with(String... keysAndValues) {
        if (keysAndValues.length % 2 != 0) {
            throw new IllegalArgumentException("with(key, value, ...): an odd number of strings");
        }
        return enter(keysAndValues.clone());
    }

    private static Scope enter(String[] adds) {
        Current c = CURRENT.get();
        LabelSet base = c.set;
        return new Scope(c, c.install(step(base, adds)));
    }

    private static LabelSet step(LabelSet base, String[] adds) {
        Step key = new Step(base, adds);
        LabelSet next = STEPS.get(key);
        if (next == null) {
            for (String s : adds) {
                Objects.requireNonNull(s, "a label key or value is null");
            }
            next = base.merge(adds);
            if (STEPS.size() >= CACHE_MAX) {
                evict();
            }
            STEPS.putIfAbsent(key, next);
        }
        return next;
    }

    /** Drops half of the cached transitions, in no particular order. */
    private static void evict() {
        int drop = CACHE_MAX / 2;
        for (var it = STEPS.keySet().iterator(); it.hasNext() && drop > 0; drop--) {
            it.next();
            it.remove();
        }
    }

    /** The calling thread's labels, as set through this class. */
    public static Map<String, String> current() {
        String[] p = CURRENT.get().set.pairs;
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < p.length; i += 2) {
            m.put(p[i], p[i + 1]);
        }
        return m;
    }

    /**
     * The value of key among the calling thread's labels as a profiler reads them from
     * libcustomlabels, or null.
     */
    public static String published(String key) {
        byte[] v = Native.get(key.getBytes(StandardCharsets.UTF_8));
        return v == null ? null : new String(v, StandardCharsets.UTF_8);
    }

    /** The number of labels a profiler reads on the calling thread. */
    public static int publishedCount() {
        return Native.count();
    }

    /** Runs with the labels of the caller of wrap. */
    public static Runnable wrap(Runnable task) {
        Objects.requireNonNull(task);
        LabelSet captured = CURRENT.get().set;
        return () -> {
            Current c = CURRENT.get();
            LabelSet prev = c.install(captured);
            try {
                task.run();
            } finally {
                c.install(prev);
            }
        };
    }

    /** Calls with the labels of the caller of wrap. */
    public static <T> Callable<T> wrap(Callable<T> task) {
        Objects.requireNonNull(task);
        LabelSet captured = CURRENT.get().set;
        return () -> {
            Current c = CURRENT.get();
            LabelSet prev = c.install(captured);
            try {
                return task.call();
            } finally {
                c.install(prev);
            }
        };
    }

    /**
     * An ExecutorService whose tasks run with the labels of the thread that submitted
     * them; shutting it down shuts executor down.
     */
    public static ExecutorService wrap(ExecutorService executor) {
        return new LabelledExecutorService(Objects.requireNonNull(executor));
    }
}
