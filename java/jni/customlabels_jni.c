// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * JNI over libcustomlabels for dev.labelprof.customlabels.Native: prepared
 * label sets and their swap, the calling thread's labels as readers see them,
 * and OpenTelemetry thread context records. Errors come back as negative errno
 * values; the Java side turns them into exceptions.
 */
#include <errno.h>
#include <jni.h>
#include <stdint.h>
#include <stdlib.h>

#include "customlabels.h"
#include "dev_labelprof_customlabels_Native.h"

static void *ptr(jlong v)
{
	return (void *)(uintptr_t)v;
}

static jlong handle(const void *p)
{
	return (jlong)(uintptr_t)p;
}

/* The hot path: one store, no allocation. */
JNIEXPORT void JNICALL Java_dev_labelprof_customlabels_Native_swap(JNIEnv *env, jclass cls,
								   jlong set)
{
	custom_labels_swap(ptr(set));
}

JNIEXPORT jlong JNICALL Java_dev_labelprof_customlabels_Native_newSet(JNIEnv *env, jclass cls)
{
	return handle(custom_labels_labelset_new());
}

JNIEXPORT void JNICALL Java_dev_labelprof_customlabels_Native_freeSet(JNIEnv *env, jclass cls,
								      jlong set)
{
	custom_labels_labelset_free(ptr(set));
}

/* The bytes of a, or NULL (ENOMEM); freed by the caller. */
static unsigned char *copy_bytes(JNIEnv *env, jbyteArray a, size_t *len)
{
	jsize n = (*env)->GetArrayLength(env, a);
	unsigned char *p = malloc((size_t)n + 1);

	if (p)
		(*env)->GetByteArrayRegion(env, a, 0, n, (jbyte *)p);
	*len = (size_t)n;
	return p;
}

JNIEXPORT jint JNICALL Java_dev_labelprof_customlabels_Native_setLabel(JNIEnv *env, jclass cls,
								       jlong set, jbyteArray key,
								       jbyteArray value)
{
	size_t klen, vlen;
	unsigned char *k = copy_bytes(env, key, &klen), *v = copy_bytes(env, value, &vlen);
	int err = -ENOMEM;

	if (k && v)
		err = custom_labels_labelset_set(ptr(set), k, klen, v, vlen);
	free(v);
	free(k);
	return err;
}

/* The value of key in the calling thread's current labels, or NULL. */
JNIEXPORT jbyteArray JNICALL Java_dev_labelprof_customlabels_Native_get(JNIEnv *env, jclass cls,
									jbyteArray key)
{
	const unsigned char *value;
	jbyteArray out = NULL;
	size_t klen, vlen;
	unsigned char *k = copy_bytes(env, key, &klen);

	if (k && !custom_labels_get(k, klen, &value, &vlen)) {
		out = (*env)->NewByteArray(env, (jsize)vlen);
		if (out)
			(*env)->SetByteArrayRegion(env, out, 0, (jsize)vlen, (const jbyte *)value);
	}
	free(k);
	return out;
}

JNIEXPORT jint JNICALL Java_dev_labelprof_customlabels_Native_count(JNIEnv *env, jclass cls)
{
	return (jint)custom_labels_count();
}

/* A thread context record and the record it replaced, installed again when it goes. */
struct otel_scope {
	struct custom_labels_otel_record rec;
	struct custom_labels_otel_record *prev;
};

static int copy_id(JNIEnv *env, jbyteArray id, unsigned char *out, jsize len)
{
	if ((*env)->GetArrayLength(env, id) != len)
		return -EINVAL;
	(*env)->GetByteArrayRegion(env, id, 0, len, (jbyte *)out);
	return 0;
}

/*
 * Makes a record of these ids, flags and attributes ({u8 key index, u8 len, len
 * bytes} entries, as in the record) and installs it on the calling thread.
 * Returns its handle, or a negative errno value (nothing installed).
 */
JNIEXPORT jlong JNICALL Java_dev_labelprof_customlabels_Native_otelEnter(JNIEnv *env, jclass cls,
									 jbyteArray trace_id,
									 jbyteArray span_id,
									 jint flags,
									 jbyteArray attrs)
{
	unsigned char tid[16], sid[8], buf[CUSTOM_LABELS_OTEL_ATTRS_MAX];
	jsize n = (*env)->GetArrayLength(env, attrs), at;
	struct otel_scope *s;
	int err;

	if (n > (jsize)sizeof(buf))
		return -ENOSPC;
	err = copy_id(env, trace_id, tid, sizeof(tid));
	if (!err)
		err = copy_id(env, span_id, sid, sizeof(sid));
	if (err)
		return err;
	(*env)->GetByteArrayRegion(env, attrs, 0, n, (jbyte *)buf);
	s = malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	err = custom_labels_otel_record_init(&s->rec, tid, sid, (unsigned char)flags);
	for (at = 0; !err && at < n; at += 2 + buf[at + 1]) {
		if (at + 2 > n || at + 2 + buf[at + 1] > n)
			err = -EINVAL;
		else
			err = custom_labels_otel_record_add(&s->rec, buf[at], buf + at + 2,
							    buf[at + 1]);
	}
	if (err) {
		free(s);
		return err;
	}
	s->prev = custom_labels_otel_attach(&s->rec);
	return handle(s);
}

/* Installs again the record scope replaced, then frees it. */
JNIEXPORT void JNICALL Java_dev_labelprof_customlabels_Native_otelExit(JNIEnv *env, jclass cls,
								       jlong scope)
{
	struct otel_scope *s = ptr(scope);

	custom_labels_otel_attach(s->prev);
	free(s);
}

/* Copies strs (UTF-8 byte arrays) as NUL-terminated strings into one allocation. */
static char **c_strings(JNIEnv *env, jobjectArray strs, jsize n)
{
	size_t size = (size_t)n * sizeof(char *);
	char **out, *p;
	jsize i;

	for (i = 0; i < n; i++) {
		jbyteArray b = (*env)->GetObjectArrayElement(env, strs, i);

		size += (size_t)(*env)->GetArrayLength(env, b) + 1;
		(*env)->DeleteLocalRef(env, b);
	}
	out = malloc(size ? size : 1);
	if (!out)
		return NULL;
	p = (char *)(out + n);
	for (i = 0; i < n; i++) {
		jbyteArray b = (*env)->GetObjectArrayElement(env, strs, i);
		jsize len = (*env)->GetArrayLength(env, b);

		(*env)->GetByteArrayRegion(env, b, 0, len, (jbyte *)p);
		(*env)->DeleteLocalRef(env, b);
		p[len] = '\0';
		out[i] = p;
		p += len + 1;
	}
	return out;
}

/* custom_labels_otel_publish: resource holds key, value, key, value, ... */
JNIEXPORT jint JNICALL Java_dev_labelprof_customlabels_Native_otelPublish(JNIEnv *env, jclass cls,
									  jobjectArray resource,
									  jobjectArray keys)
{
	jsize nr = (*env)->GetArrayLength(env, resource), nk = (*env)->GetArrayLength(env, keys);
	struct custom_labels_otel_attr *attrs = NULL;
	char **r = c_strings(env, resource, nr), **k = c_strings(env, keys, nk);
	jsize i;
	int err = -ENOMEM;

	if (r && k)
		attrs = malloc((size_t)(nr / 2 + 1) * sizeof(*attrs));
	if (attrs) {
		for (i = 0; i + 1 < nr; i += 2)
			attrs[i / 2] = (struct custom_labels_otel_attr){r[i], r[i + 1]};
		err = custom_labels_otel_publish(attrs, (size_t)nr / 2, (const char *const *)k,
						 (size_t)nk);
	}
	free(attrs);
	free(k);
	free(r);
	return err;
}
