// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
package dev.labelprof.customlabels;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The OpenTelemetry thread context (OTEP 4947) of the calling thread, and the process
 * context (OTEP 4719) that names its attributes, written through libcustomlabels:
 *
 * <pre>{@code
 * OtelContext.publish(Map.of("service.name", "checkout"), List.of("http.route"));
 * try (var s = OtelContext.attach(traceId, spanId, 1, "http.route", "/api/items")) {
 *     handle(request);
 * }
 * }</pre>
 *
 * <p>A scope installs a record of its own (one JNI call) and its {@code close} installs
 * the one before again and frees it. Records are not carried to other threads:
 * attach a scope where the span becomes current there too.
 */
public final class OtelContext {
    private static volatile Map<String, Integer> keyIndex = Map.of();

    private OtelContext() {}

    /**
     * Publishes the process context: its resource attributes, and the names of the thread
     * context's attribute keys (attributeKeys.get(i) names index i; at most 256).
     */
    public static synchronized void publish(Map<String, String> resource,
            List<String> attributeKeys) {
        if (attributeKeys.size() > 256) {
            throw new IllegalArgumentException("more than 256 attribute keys");
        }
        byte[][] r = new byte[2 * resource.size()][];
        int i = 0;
        for (var e : resource.entrySet()) {
            r[i++] = e.getKey().getBytes(StandardCharsets.UTF_8);
            r[i++] = e.getValue().getBytes(StandardCharsets.UTF_8);
        }
        byte[][] k = new byte[attributeKeys.size()][];
        Map<String, Integer> index = new HashMap<>();
        for (i = 0; i < k.length; i++) {
            k[i] = attributeKeys.get(i).getBytes(StandardCharsets.UTF_8);
            index.putIfAbsent(attributeKeys.get(i), i);
        }
        int err = Native.otelPublish(r, k);
        if (err != 0) {
            throw new IllegalArgumentException("custom_labels_otel_publish: error " + -err);
        }
        keyIndex = Map.copyOf(index);
    }

    /** A thread context scope; {@code close} restores the context before it. */
    public static final class Scope implements AutoCloseable {
        private final Thread thread = Thread.currentThread();
        private long handle;

        Scope(long handle) {
            this.handle = handle;
        }

        /**
         * Installs the record the thread had before again. A second close does nothing.
         *
         * @throws IllegalStateException on another thread than the one that opened it
         */
        @Override
        public void close() {
            if (handle == 0) {
                return;
            }
            if (Thread.currentThread() != thread) {
                throw new IllegalStateException("an OTel context scope closed on another thread");
            }
            Native.otelExit(handle);
            handle = 0;
        }
    }

    /**
     * Installs the context of a span on the calling thread until the scope closes:
     * traceId (16 bytes, all zero: no trace), spanId (8 bytes), the W3C trace flags, and
     * attributes key, value, ... whose keys were published (values up to 255 UTF-8 bytes).
     */
    public static Scope attach(byte[] traceId, byte[] spanId, int traceFlags,
            String... attributes) {
        if (traceId.length != 16 || spanId.length != 8) {
            throw new IllegalArgumentException("trace id of " + traceId.length
                    + " bytes, span id of " + spanId.length + ": 16 and 8 expected");
        }
        if (attributes.length % 2 != 0) {
            throw new IllegalArgumentException("attach(..., key, value, ...): an odd number");
        }
        ByteArrayOutputStream entries = new ByteArrayOutputStream();
        Map<String, Integer> index = keyIndex;
        for (int i = 0; i < attributes.length; i += 2) {
            Integer k = index.get(attributes[i]);
            if (k == null) {
                throw new IllegalArgumentException("attribute key " + attributes[i]
                        + " is not among the published ones");
            }
            byte[] v = attributes[i + 1].getBytes(StandardCharsets.UTF_8);
            if (v.length > 255) {
                throw new IllegalArgumentException("attribute " + attributes[i]
                        + ": value over 255 bytes");
            }
            entries.write(k);
            entries.write(v.length);
            entries.write(v, 0, v.length);
        }
        long h = Native.otelEnter(traceId, spanId, traceFlags, entries.toByteArray());
        if (h < 0) {
            throw new IllegalArgumentException("OTel thread context record: error " + -h
                    + " (attributes beyond its 612 bytes)");
        }
        return new Scope(h);
    }
}
