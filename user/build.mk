# Files generated for user/ at build time.
#
# html_assets.h: the HTML writer's page (user/format/html/: template, CSS, flame graph
# JS) as C byte arrays, with a Content-Security-Policy that allows only that
# CSS and JS. A host tool (python3) makes it, so cross builds work the same.

HTML_ASSETS := $(OUTPUT)/html_assets.h
HTML_SRCS := user/format/html/template.html user/format/html/flamegraph.css user/format/html/flamegraph.js

$(HTML_ASSETS): user/format/html/embed.py $(HTML_SRCS) | $(OUTPUT)
	$(call msg,GEN,$@)
	$(Q)python3 user/format/html/embed.py $(HTML_SRCS) $@.tmp && mv $@.tmp $@

$(OUTPUT)/user/format/output_html.o: $(HTML_ASSETS)
# Fuzz targets compile their user/ sources themselves (tests/fuzz/build.mk).
$(foreach t,$(FUZZ_ALL),$(if $(filter user/format/output_html.c,$(FUZZ_SRCS_$(t))), \
	$(eval $(FUZZ_DIR)/$(t): $(HTML_ASSETS))))

# version.h (Makefile): the OTLP writer names its scope's version.
$(foreach t,$(FUZZ_ALL),$(if $(filter user/format/output_otlp.c,$(FUZZ_SRCS_$(t))), \
	$(eval $(FUZZ_DIR)/$(t): $(VERSION_H))))
