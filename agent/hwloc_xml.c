/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hwloc_xml.c — reading an hwloc XML export for hwloc, which trusts it.
 *
 * libhwloc's XML parser recurses once per nested element and reads a file to
 * its end, so a hostile export crashes it (100,000 nested elements) or grows
 * it without bound (/dev/zero).  The file is read here first, at most
 * AGENT_HWLOC_XML_MAX_BYTES (refused when it passes the limit, so a stream
 * too), and its element nesting is counted by a small
 * tokenizer against AGENT_HWLOC_XML_MAX_DEPTH: comments, CDATA sections,
 * processing instructions, DOCTYPE declarations (internal subset included)
 * and quoted attribute values are skipped, so markup inside them never
 * counts.  hw.c then hands the checked buffer to hwloc.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent.h"
#include "kernel/lib/file.h"

/* The rest of the construct that starts at p (after "<"), past its end. */
static const char *skip_to(const char *p, const char *end, const char *close)
{
	size_t n = strlen(close);

	for (; p + n <= end; p++)
		if (memcmp(p, close, n) == 0)
			return p + n;
	return NULL;
}

/* Past a declaration such as <!DOCTYPE ...>, its internal [subset] included. */
static const char *doctype_end(const char *p, const char *end)
{
	for (; p < end; p++) {
		if (*p == '>')
			return p + 1;
		if (*p == '[')
			return skip_to(p, end, "]>");
	}
	return NULL;
}

/* Past the end of a tag (p after "<name"), quoted values skipped; self says "/>". */
static const char *tag_end(const char *p, const char *end, bool *self)
{
	char quote = 0;

	for (; p < end; p++) {
		if (quote) {
			quote = *p == quote ? 0 : quote;
		} else if (*p == '"' || *p == '\'') {
			quote = *p;
		} else if (*p == '>') {
			*self = p[-1] == '/';
			return p + 1;
		}
	}
	return NULL;
}

/* Element nesting of an XML text, or -1 when a construct is not closed. */
static int xml_depth(const char *p, const char *end, int max, size_t *ret_at)
{
	int depth = 0, deepest = 0;
	const char *start = p;

	while ((p = memchr(p, '<', (size_t)(end - p)))) {
		const char *q = p + 1;
		bool self = false;

		if (q < end && *q == '?')
			q = skip_to(q, end, "?>");
		else if (end - q >= 3 && memcmp(q, "!--", 3) == 0)
			q = skip_to(q + 3, end, "-->");
		else if (end - q >= 8 && memcmp(q, "![CDATA[", 8) == 0)
			q = skip_to(q + 8, end, "]]>");
		else if (q < end && *q == '!')
			q = doctype_end(q, end);
		else if (q < end && *q == '/')
			q = skip_to(q, end, ">"), depth--;
		else if ((q = tag_end(q, end, &self)) && !self && ++depth > deepest)
			deepest = depth;
		if (!q || deepest > max) {
			*ret_at = (size_t)(p - start);
			return q ? deepest : -1;
		}
		p = q;
	}
	return deepest;
}

/* Line and column (1-based) of offset at in text. */
static void line_col(const char *text, size_t at, size_t *line, size_t *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < at; i++, (*col)++)
		if (text[i] == '\n')
			(*line)++, *col = 0;
}

int agent_hwloc_xml_read(const char *path, char **ret_buf, size_t *ret_len, char *err,
			 size_t errlen)
{
	size_t len = 0, line, col, at = 0;
	char *buf = NULL;
	int depth, r = pk_read_small_file(path, AGENT_HWLOC_XML_MAX_BYTES, &buf, &len);

	if (r == -EFBIG)
		goto too_big;
	if (r < 0) {
		snprintf(err, errlen, "%s: %s", path,
			 r == -ENOMEM ? "out of memory" : strerror(-r));
		return r;
	}
	depth = xml_depth(buf, buf + len, AGENT_HWLOC_XML_MAX_DEPTH, &at);
	if (depth < 0 || depth > AGENT_HWLOC_XML_MAX_DEPTH) {
		line_col(buf, at, &line, &col);
		if (depth < 0)
			snprintf(err, errlen,
				 "%s:%zu:%zu: not an hwloc XML export: markup not closed", path,
				 line, col);
		else
			snprintf(err, errlen, "%s:%zu:%zu: elements nested deeper than %d levels",
				 path, line, col, AGENT_HWLOC_XML_MAX_DEPTH);
		free(buf);
		return -EINVAL;
	}
	*ret_buf = buf;
	*ret_len = len;
	return 0;
too_big:
	snprintf(err, errlen, "%s: larger than %d bytes, not an hwloc XML export", path,
		 AGENT_HWLOC_XML_MAX_BYTES);
	return -EINVAL;
}
