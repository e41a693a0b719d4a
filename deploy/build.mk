# The labelprof(8) man page, and `make install` / `make uninstall`.
#
# The man page is generated from `labelprof --help` and each
# `labelprof COMMAND --help` (docs/mkman.py; the hand-written sections are in
# docs/labelprof.8.in, the capabilities in deploy/capabilities.txt), so it
# needs a labelprof that runs here: `make` builds it for the host
# architecture only.
#
#   make install [PREFIX=/usr/local] [DESTDIR=] [SYSCONFDIR=/etc]
#     $(PREFIX)/bin/labelprof
#     $(PREFIX)/lib/systemd/system/labelprof.service  (ExecStart= set to the above)
#     $(PREFIX)/share/man/man8/labelprof.8
#     $(SYSCONFDIR)/labelprof/agent.conf              (only if there is none)
#   make uninstall   removes them; agent.conf only if it is still the example

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
SYSTEMD_UNIT_DIR ?= $(PREFIX)/lib/systemd/system
SYSCONFDIR ?= /etc
INSTALL ?= install
AGENT_CONF_EXAMPLE ?= deploy/agent.conf.example

MAN_PAGE := $(OUTPUT)/labelprof.8
MAN_SRCS := docs/mkman.py docs/labelprof.8.in deploy/capabilities.txt
AGENT_CONF := $(SYSCONFDIR)/labelprof/agent.conf
UNIT_SRC := deploy/labelprof.service

ifeq ($(ARCH),$(HOST_ARCH))
ALL_TARGETS += $(MAN_PAGE)
endif

$(MAN_PAGE): $(LABELPROF) $(MAN_SRCS)
	$(call msg,MAN,$@)
	$(Q)python3 docs/mkman.py $(LABELPROF) docs/labelprof.8.in deploy/capabilities.txt $@

.PHONY: man install uninstall
man: $(MAN_PAGE)

# The unit names /usr/local/bin/labelprof and /etc/labelprof/agent.conf: point
# it at where they are installed.
install: $(LABELPROF) $(MAN_PAGE) $(UNIT_SRC) $(AGENT_CONF_EXAMPLE)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)$(INSTALL) -D -m 0755 $(LABELPROF) $(DESTDIR)$(BINDIR)/labelprof
	$(Q)$(INSTALL) -D -m 0644 $(MAN_PAGE) $(DESTDIR)$(MANDIR)/man8/labelprof.8
	$(Q)$(INSTALL) -d -m 0755 $(DESTDIR)$(SYSTEMD_UNIT_DIR)
	$(Q)sed -e 's|^ExecStart=/usr/local/bin/labelprof |ExecStart=$(BINDIR)/labelprof |' \
		-e 's|^\(ExecStart=.*\) /etc/labelprof/agent\.conf$$|\1 $(AGENT_CONF)|' \
		$(UNIT_SRC) > $(DESTDIR)$(SYSTEMD_UNIT_DIR)/.labelprof.service.tmp
	$(Q)chmod 0644 $(DESTDIR)$(SYSTEMD_UNIT_DIR)/.labelprof.service.tmp && \
		mv $(DESTDIR)$(SYSTEMD_UNIT_DIR)/.labelprof.service.tmp \
		$(DESTDIR)$(SYSTEMD_UNIT_DIR)/labelprof.service
	$(Q)if [ -e $(DESTDIR)$(AGENT_CONF) ]; then \
		echo "  KEEP     $(DESTDIR)$(AGENT_CONF) (exists)"; \
	else \
		$(INSTALL) -D -m 0644 $(AGENT_CONF_EXAMPLE) $(DESTDIR)$(AGENT_CONF); \
	fi

uninstall:
	$(call msg,UNINSTALL,$(DESTDIR)$(PREFIX))
	$(Q)rm -f $(DESTDIR)$(BINDIR)/labelprof $(DESTDIR)$(MANDIR)/man8/labelprof.8 \
		$(DESTDIR)$(SYSTEMD_UNIT_DIR)/labelprof.service
	$(Q)if [ ! -e $(DESTDIR)$(AGENT_CONF) ]; then :; \
	elif cmp -s $(AGENT_CONF_EXAMPLE) $(DESTDIR)$(AGENT_CONF); then \
		rm -f $(DESTDIR)$(AGENT_CONF); \
		rmdir --ignore-fail-on-non-empty $(DESTDIR)$(SYSCONFDIR)/labelprof; \
	else \
		echo "  KEEP     $(DESTDIR)$(AGENT_CONF) (edited)"; \
	fi
