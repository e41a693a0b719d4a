# java/: the Java library over libcustomlabels (package dev.labelprof.customlabels):
# its classes in customlabels.jar, its JNI glue in libcustomlabels-jni.so, which
# loads libcustomlabels.so from its own directory (docs/design.md section 12).

# The JDK of the javac on PATH (make deps installs openjdk-17-jdk-headless).
JDK_HOME := $(patsubst %/bin/javac,%,$(shell readlink -f "$$(command -v javac)" 2>/dev/null))
JAVAC = $(if $(JDK_HOME),$(JDK_HOME)/bin/javac,$(error javac not found: run 'make deps'))
JAR = $(JDK_HOME)/bin/jar
JNI_INCLUDES = -I$(JDK_HOME)/include -I$(JDK_HOME)/include/linux
# Class files for Java 17, whichever JDK builds them.
# -try: a scope held only to be closed is the point of try-with-resources here.
JAVAC_FLAGS := --release 17 -encoding UTF-8 -Xlint:all,-try -Werror

J_SRCS := $(wildcard java/src/dev/labelprof/customlabels/*.java)
J_DIR := $(OUTPUT)/java
J_STAMP := $(J_DIR)/classes.stamp
J_JAR := $(OUTPUT)/lib/customlabels.jar
J_SO := $(OUTPUT)/lib/libcustomlabels-jni.so

ALL_TARGETS += $(J_JAR) $(J_SO)

# The classes, and the JNI header javac writes from Native.java.
$(J_STAMP): $(J_SRCS)
	$(call msg,JAVAC,$(J_DIR)/classes)
	$(Q)rm -rf $(J_DIR)/classes $(J_DIR)/include && mkdir -p $(J_DIR) && \
		$(JAVAC) $(JAVAC_FLAGS) -d $(J_DIR)/classes -h $(J_DIR)/include $^ && touch $@

$(J_JAR): $(J_STAMP)
	$(call msg,JAR,$@)
	$(Q)mkdir -p $(@D) && $(JAR) --create --file $@ -C $(J_DIR)/classes .

$(J_DIR)/customlabels_jni.o: java/jni/customlabels_jni.c $(J_STAMP)
	$(call msg,CC,$@)
	$(Q)$(CC) $(CFLAGS) -fPIC -fvisibility=hidden -Ilibcustomlabels -I$(J_DIR)/include \
		$(JNI_INCLUDES) -c $< -o $@

# libcustomlabels.so as a dependency, not linked in: a process has one copy of the
# labels' thread-local storage, which native code linking the library shares.
# (Its path by name: libcustomlabels/build.mk, which names it, comes later.)
$(J_SO): $(J_DIR)/customlabels_jni.o $(OUTPUT)/lib/libcustomlabels.so
	$(call msg,LIB,$@)
	$(Q)$(CC) $(LDFLAGS) -shared $< -L$(@D) -l:libcustomlabels.so -Wl,-rpath,'$$ORIGIN' \
		-Wl,-z,now -o $@

# $(1): a jar of the classes of $(2), compiled against the library.
define j_jar
$(1): $(2) $(J_JAR)
	$$(call msg,JAVAC,$$@)
	$$(Q)rm -rf $$@.classes && mkdir -p $$@.classes && \
		$$(JAVAC) $$(JAVAC_FLAGS) -cp $(J_JAR) -d $$@.classes $(2) && \
		$$(JAR) --create --file $$@ -C $$@.classes . && rm -rf $$@.classes
endef

# The library's own test (tests/e2e/test_java_labels.py runs it) and benchmark.
J_TEST_JAR := $(OUTPUT)/tests/customlabels-test.jar
J_BENCH_JAR := $(OUTPUT)/bench/customlabels-bench.jar
$(eval $(call j_jar,$(J_TEST_JAR),$(wildcard java/test/*.java)))
$(eval $(call j_jar,$(J_BENCH_JAR),$(wildcard bench/java/*.java)))
TEST_DEPS += $(J_TEST_JAR) $(J_SO)
BENCH_BINS += $(J_BENCH_JAR) $(J_SO)
