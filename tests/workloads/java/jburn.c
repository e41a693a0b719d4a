// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * JBurn's native method: upcall calls JBurn.fromNative back, so that a
 * stack goes Java -> native -> Java.
 */
#include <jni.h>

/* What javac -h would declare. */
JNIEXPORT void JNICALL Java_JBurn_upcall(JNIEnv *env, jclass cls, jint set, jlong until);

JNIEXPORT void JNICALL Java_JBurn_upcall(JNIEnv *env, jclass cls, jint set, jlong until)
{
	static jmethodID from_native;

	if (!from_native)
		from_native = (*env)->GetStaticMethodID(env, cls, "fromNative", "(IJ)V");
	if (!from_native)
		return;
	(*env)->CallStaticVoidMethod(env, cls, from_native, set, until);
	/* not a tail call: this frame stays on the stack under the Java it called */
	if ((*env)->ExceptionCheck(env))
		(*env)->ExceptionDescribe(env);
}
