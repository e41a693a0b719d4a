// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
package dev.labelprof.customlabels;

/**
 * The JNI functions (java/jni/customlabels_jni.c) over libcustomlabels. The library is
 * the file named by the system property {@code dev.labelprof.customlabels.lib}, else
 * libcustomlabels-jni.so on {@code java.library.path}; it loads libcustomlabels.so from
 * its own directory.
 */
final class Native {
    static {
        String path = System.getProperty("dev.labelprof.customlabels.lib");
        try {
            if (path != null) {
                System.load(path);
            } else {
                System.loadLibrary("customlabels-jni");
            }
        } catch (UnsatisfiedLinkError e) {
            UnsatisfiedLinkError hint = new UnsatisfiedLinkError(e.getMessage()
                    + ": put libcustomlabels-jni.so (and libcustomlabels.so beside it) on"
                    + " -Djava.library.path, or name it with"
                    + " -Ddev.labelprof.customlabels.lib=PATH");
            hint.initCause(e);
            throw hint;
        }
    }

    private Native() {}

    /** Installs the prepared set (0: none) on the calling thread. */
    static native void swap(long set);

    /** A new empty prepared set, 0 when out of memory. */
    static native long newSet();

    static native void freeSet(long set);

    /** 0 or a negative errno value. */
    static native int setLabel(long set, byte[] key, byte[] value);

    /** The calling thread's value of key as readers see it, or null. */
    static native byte[] get(byte[] key);

    /** The number of labels readers see on the calling thread. */
    static native int count();

    /**
     * Installs a new OpenTelemetry thread context record on the calling thread: ids,
     * flags and attribute entries {key index, length, bytes}. Its handle, or a negative
     * errno value.
     */
    static native long otelEnter(byte[] traceId, byte[] spanId, int flags, byte[] attrs);

    /** Installs the record otelEnter replaced and frees its own. */
    static native void otelExit(long scope);

    /** custom_labels_otel_publish: resource is key, value, ...; UTF-8 strings. */
    static native int otelPublish(byte[][] resource, byte[][] keys);
}
