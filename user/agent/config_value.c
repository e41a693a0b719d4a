// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The values of the agent's settings (config.h): numbers with units, headers, addresses, URLs. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/compiler.h"
#include "lib/hex.h"
#include "agent/config_int.h"
#include "format/output.h"
#include "profile/labelsel.h"

#define OTLP_PROFILES_PATH "/v1development/profiles"

/* A number and a unit; unit_of returns the multiplier of a suffix, 0 if unknown. */
static int parse_scaled(const char *s, __u64 (*unit_of)(const char *), __u64 *out)
{
	char num[32];
	size_t n = strspn(s, "0123456789");
	unsigned long long v;
	__u64 mult;

	if (!n || n >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, n);
	num[n] = '\0';
	mult = unit_of(s + n);
	if (cli_parse_uint(num, ULLONG_MAX, &v) || !mult || __builtin_mul_overflow(v, mult, out))
		return -EINVAL;
	return 0;
}

static __u64 duration_unit(const char *u)
{
	static const struct {
		const char *name;
		__u64 ns;
	} units[] = {{"", S}, {"ms", MS}, {"s", S}, {"m", 60 * S}, {"h", 3600 * S}, {"d", DAY}};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcmp(u, units[i].name))
			return units[i].ns;
	return 0;
}

int agent_parse_duration(const char *s, __u64 *ns)
{
	return parse_scaled(s, duration_unit, ns);
}

static __u64 size_unit(const char *u)
{
	static const char letters[] = "KMGT";
	const char *l = *u ? strchr(letters, toupper((unsigned char)*u)) : NULL;

	if (!*u || !strcmp(u, "B"))
		return 1;
	if (!l || (u[1] && strcmp(u + 1, "B") && strcmp(u + 1, "iB")))
		return 0;
	return 1ull << (10 * (l - letters + 1));
}

int agent_parse_size(const char *s, __u64 *bytes)
{
	return parse_scaled(s, size_unit, bytes);
}

int agent_parse_bool(const char *s, bool *b)
{
	static const char *const words[][2] = {
		{"false", "true"}, {"no", "yes"}, {"off", "on"}, {"0", "1"}};
	size_t i, j;

	for (i = 0; i < ARRAY_SIZE(words); i++) {
		for (j = 0; j < 2; j++) {
			if (!strcasecmp(s, words[i][j])) {
				*b = j;
				return 0;
			}
		}
	}
	return -EINVAL;
}

/* Hands a malloc'd string (or NULL) to the configuration; NULL on allocation failure. */
static char *keep(struct agent_config *c, char *s)
{
	char **strings = s ? realloc(c->strings, (c->string_count + 1) * sizeof(*strings)) : NULL;

	if (!strings) {
		free(s);
		return NULL;
	}
	c->strings = strings;
	c->strings[c->string_count++] = s;
	return s;
}

char *agent_config__own(struct agent_config *c, const char *s, size_t len)
{
	return keep(c, strndup(s, len));
}

static bool is_token_char(char ch)
{
	return isalnum((unsigned char)ch) || strchr("!#$%&'*+-.^_`|~", ch);
}

static const char *trim(const char *s, size_t *len)
{
	while (*len && isspace((unsigned char)*s)) {
		s++;
		(*len)--;
	}
	while (*len && isspace((unsigned char)s[*len - 1]))
		(*len)--;
	return s;
}

/* Name=value[,Name=value...], as OTEL_EXPORTER_OTLP_HEADERS. */
static int parse_headers(struct agent_config *c, const char *v, char *err, size_t err_len)
{
	static const char *const reserved[] = {"content-type", "content-encoding",
					       "content-length"};
	const char *item = v, *name, *val, *eq;
	size_t len, name_len, val_len, i, k;
	int hi, lo;
	char *out;

	c->header_count = 0;
	while (*item) {
		len = strcspn(item, ",");
		eq = memchr(item, '=', len);
		if (!eq) {
			snprintf(err, err_len, "'%.*s' is not Name=value", (int)len, item);
			return -EINVAL;
		}
		name_len = eq - item;
		name = trim(item, &name_len);
		val_len = item + len - eq - 1;
		val = trim(eq + 1, &val_len);
		for (i = 0; i < name_len && is_token_char(name[i]); i++)
			;
		if (!name_len || i < name_len) {
			snprintf(err, err_len, "invalid header name '%.*s'", (int)name_len, name);
			return -EINVAL;
		}
		for (k = 0; k < ARRAY_SIZE(reserved); k++) {
			if (strlen(reserved[k]) == name_len &&
			    !strncasecmp(name, reserved[k], name_len)) {
				snprintf(err, err_len, "%.*s is set by labelprof", (int)name_len,
					 name);
				return -EINVAL;
			}
		}
		if (c->header_count == AGENT_MAX_HEADERS) {
			snprintf(err, err_len, "at most %d headers", AGENT_MAX_HEADERS);
			return -EINVAL;
		}
		c->headers[c->header_count].name = agent_config__own(c, name, name_len);
		out = agent_config__own(c, val, val_len);
		if (!out || !c->headers[c->header_count].name)
			return -ENOMEM;
		/* %XX decoding in place; control bytes (CR, LF) would split the request */
		for (i = k = 0; i < val_len; i++, k++) {
			if (val[i] == '%' && i + 2 < val_len &&
			    (hi = hex__digit(val[i + 1])) >= 0 &&
			    (lo = hex__digit(val[i + 2])) >= 0) {
				out[k] = hi << 4 | lo;
				i += 2;
			} else {
				out[k] = val[i];
			}
			if ((unsigned char)out[k] < 0x20 || out[k] == 0x7f) {
				snprintf(err, err_len, "control character in the value of %.*s",
					 (int)name_len, name);
				return -EINVAL;
			}
		}
		out[k] = '\0';
		c->headers[c->header_count++].value = out;
		item += len;
		if (*item)
			item++;
	}
	return 0;
}

/* ADDR:PORT, [V6ADDR]:PORT or :PORT (every address). */
static int parse_listen(struct agent_config *c, const char *v, char *err, size_t err_len)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
				 .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV},
			*res;
	const char *colon = strrchr(v, ':');
	char host[256];
	unsigned long long port;
	size_t hlen;
	int rc;

	if (!colon || cli_parse_uint(colon + 1, 65535, &port) || !port) {
		snprintf(err, err_len, "'%s' is not ADDRESS:PORT", v);
		return -EINVAL;
	}
	hlen = colon - v;
	if (hlen >= 2 && v[0] == '[' && v[hlen - 1] == ']') {
		v++;
		hlen -= 2;
	}
	if (hlen >= sizeof(host)) {
		snprintf(err, err_len, "address too long");
		return -EINVAL;
	}
	memcpy(host, v, hlen);
	host[hlen] = '\0';
	rc = getaddrinfo(hlen ? host : NULL, colon + 1, &hints, &res);
	if (rc) {
		snprintf(err, err_len, "cannot resolve '%.64s': %s", host, gai_strerror(rc));
		return -EINVAL;
	}
	memcpy(&c->metrics_addr, res->ai_addr, res->ai_addrlen);
	c->metrics_addr_len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static int parse_endpoint(struct agent_config *c, const char *v, char *err, size_t err_len)
{
	size_t len = strlen(v);
	char *url;

	if (strncmp(v, "http://", 7) && strncmp(v, "https://", 8)) {
		snprintf(err, err_len, "'%s' is not an http:// or https:// URL", v);
		return -EINVAL;
	}
	while (len && v[len - 1] == '/')
		len--;
	if (asprintf(&url, "%.*s%s", (int)len, v, OTLP_PROFILES_PATH) < 0)
		return -ENOMEM;
	c->otlp_url = keep(c, url);
	return c->otlp_url ? 0 : -ENOMEM;
}

static int parse_formats(struct agent_config *c, const char *v, char *err, size_t err_len)
{
	const char *p = v;
	size_t len;

	c->formats = 0;
	while (*p) {
		len = strcspn(p, ",");
		if (len == 5 && !strncmp(p, "pprof", 5)) {
			c->formats |= AGENT_FORMAT_PPROF;
		} else if (len == 4 && !strncmp(p, "otlp", 4)) {
			c->formats |= AGENT_FORMAT_OTLP;
		} else {
			snprintf(err, err_len, "unknown format '%.*s' (pprof, otlp)", (int)len, p);
			return -EINVAL;
		}
		p += len + !!p[len];
	}
	if (!c->formats) {
		snprintf(err, err_len, "no format given (pprof, otlp)");
		return -EINVAL;
	}
	return 0;
}

int agent_config__set_key(struct agent_config *c, const struct key_def *k, const char *v, char *err,
			  size_t err_len)
{
	unsigned long long n = 0;
	bool b;
	int r;

	switch (k->type) {
	case T_UINT:
	case T_BYTES:
	case T_SIZE:
	case T_DURATION:
		r = k->type == T_UINT	    ? cli_parse_uint(v, ULLONG_MAX, &n)
		    : k->type == T_DURATION ? agent_parse_duration(v, &n)
					    : agent_parse_size(v, &n);
		if (r) {
			snprintf(err, err_len, "invalid %s '%s'%s",
				 k->type == T_DURATION ? "duration"
				 : k->type == T_UINT   ? "number"
						       : "size",
				 v,
				 k->type == T_DURATION ? " (e.g. 500ms, 60s, 5m, 1h, 7d)"
				 : k->type == T_UINT   ? ""
						       : " (e.g. 4096, 64K, 512M, 1G)");
			return -EINVAL;
		}
		if (n < k->min || n > k->max) {
			snprintf(err, err_len, "'%s' is out of range", v);
			return -EINVAL;
		}
		if (k->type == T_UINT)
			*FIELD(c, k, unsigned int) = n;
		else if (k->type == T_SIZE)
			*FIELD(c, k, size_t) = n;
		else
			*FIELD(c, k, __u64) = n;
		return 0;
	case T_BOOL:
		if (agent_parse_bool(v, &b)) {
			snprintf(err, err_len, "invalid boolean '%s' (true or false)", v);
			return -EINVAL;
		}
		*FIELD(c, k, bool) = b;
		return 0;
	case T_FORMATS:
		return parse_formats(c, v, err, err_len);
	case T_LABELS:
		r = *v ? output__extra_labels_by_names(v) : 0;
		if (r < 0) {
			snprintf(err, err_len,
				 "unknown label in '%s' (pid, tid, comm, thread_name)", v);
			return -EINVAL;
		}
		c->extra_labels = r;
		return 0;
	case T_HEADERS:
		return parse_headers(c, v, err, err_len);
	case T_KEEP_LABELS:
		if (!agent_parse_bool(v, &b)) {
			c->sampling.opts.read_labels = b;
			c->keep_labels = NULL;
			return 0;
		}
		c->sampling.opts.read_labels = true;
		/* fallthrough */
	case T_DROP_LABELS:
		if (*v && labelsel__check(v, err, err_len))
			return -EINVAL;
		break;
	case T_UNWIND:
		if (cli_parse_unwind(v, FIELD(c, k, enum lp_unwind_mode))) {
			snprintf(err, err_len, "invalid unwind method '%s' (auto, fp or cfi)", v);
			return -EINVAL;
		}
		return 0;
	default:
		break;
	}
	/* strings: empty means unset */
	if (!*v) {
		*FIELD(c, k, const char *) = NULL;
		if (k->type == T_CGROUP)
			c->sampling.opts.filter_mode = LP_FILTER_ALL;
		return 0;
	}
	if (k->type == T_ENDPOINT)
		return parse_endpoint(c, v, err, err_len);
	if (k->type == T_LISTEN && parse_listen(c, v, err, err_len))
		return -EINVAL;
	*FIELD(c, k, const char *) = agent_config__own(c, v, strlen(v));
	if (!*FIELD(c, k, const char *))
		return -ENOMEM;
	if (k->type == T_CGROUP)
		c->sampling.opts.filter_mode = LP_FILTER_CGROUP;
	return 0;
}
