/* SPDX-License-Identifier: Apache-2.0 */
/*
 * write.c — writing trees back out as JSON or YAML.
 *
 * JSON is jansson's, indented by 2, keys in the order they were read.  YAML
 * goes through libyaml's emitter one event per node, so escaping and line
 * folding are libyaml's; the only choice made here is the scalar style: a
 * string that would read back as a number, bool or null (here or in a YAML
 * 1.1 reader such as kubectl's) is double-quoted, multi-line strings become
 * literal blocks, reals always carry a '.' or exponent so they stay reals.
 *
 * A List can be written item by item (pk_write_list) with the same output as
 * the whole tree: items kept as compact text (pk_compact_object) are parsed
 * back one at a time, so a cluster of them never exists as trees at once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "kernel/api/api.h"
#include "kernel/api/api-internal.h"

static int emit(yaml_emitter_t *e, yaml_event_t *ev)
{
	return yaml_emitter_emit(e, ev) ? 0 : -EIO;
}

static int emit_scalar(yaml_emitter_t *e, const char *text, size_t len, yaml_scalar_style_t style)
{
	yaml_event_t ev;

	if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)text, (int)len, 1, 1,
					  style))
		return -ENOMEM;
	return emit(e, &ev);
}

/* Shortest text that reads back as the same double, always real-looking. */
static void format_real(double d, char *buf, size_t len)
{
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, len, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	if (!strpbrk(buf, ".eEn"))
		strncat(buf, ".0", len - strlen(buf) - 1);
}

static int emit_string(yaml_emitter_t *e, const json_t *v)
{
	const char *s = json_string_value(v);
	size_t len = json_string_length(v);
	yaml_scalar_style_t style = YAML_ANY_SCALAR_STYLE;

	if (pk_scalar_needs_quotes(s, len))
		style = YAML_DOUBLE_QUOTED_SCALAR_STYLE;
	else if (memchr(s, '\n', len))
		style = YAML_LITERAL_SCALAR_STYLE;
	return emit_scalar(e, s, len, style);
}

static int emit_value(yaml_emitter_t *e, const json_t *v)
{
	yaml_event_t ev;
	char buf[64];
	const char *k;
	json_t *child;
	size_t i;
	int ret;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
							 YAML_BLOCK_MAPPING_STYLE))
			return -ENOMEM;
		if ((ret = emit(e, &ev)) < 0)
			return ret;
		json_object_foreach((json_t *)v, k, child)
		{
			json_t *key = json_string(k);

			ret = key ? emit_string(e, key) : -ENOMEM;
			json_decref(key);
			if (ret < 0 || (ret = emit_value(e, child)) < 0)
				return ret;
		}
		yaml_mapping_end_event_initialize(&ev);
		return emit(e, &ev);
	case JSON_ARRAY:
		if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
							  YAML_BLOCK_SEQUENCE_STYLE))
			return -ENOMEM;
		if ((ret = emit(e, &ev)) < 0)
			return ret;
		json_array_foreach(v, i, child) if ((ret = emit_value(e, child)) < 0) return ret;
		yaml_sequence_end_event_initialize(&ev);
		return emit(e, &ev);
	case JSON_STRING:
		return emit_string(e, v);
	case JSON_INTEGER:
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return emit_scalar(e, buf, strlen(buf), YAML_PLAIN_SCALAR_STYLE);
	case JSON_REAL:
		format_real(json_real_value(v), buf, sizeof(buf));
		return emit_scalar(e, buf, strlen(buf), YAML_PLAIN_SCALAR_STYLE);
	case JSON_TRUE:
		return emit_scalar(e, "true", 4, YAML_PLAIN_SCALAR_STYLE);
	case JSON_FALSE:
		return emit_scalar(e, "false", 5, YAML_PLAIN_SCALAR_STYLE);
	default:
		return emit_scalar(e, "null", 4, YAML_PLAIN_SCALAR_STYLE);
	}
}

/* An item of a List: the tree, or the one its compact text reads back as. */
static json_t *list_item(const json_t *item)
{
	if (!json_is_string(item))
		return json_incref((json_t *)item);
	return json_loadb(json_string_value(item), json_string_length(item), 0, NULL);
}

/* value, or (items non-NULL) a List of items written item by item. */
static int emit_document(yaml_emitter_t *e, const json_t *value, const json_t *items)
{
	static const char *const head[] = {"apiVersion", "v1", "kind", "List", "items"};
	yaml_event_t ev;
	size_t i;
	int ret = 0;

	if (!items)
		return emit_value(e, value);
	if (!yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE) ||
	    (ret = emit(e, &ev)) < 0)
		return ret ? ret : -ENOMEM;
	for (i = 0; i < 5 && ret == 0; i++) {
		json_t *s = json_string(head[i]);

		ret = s ? emit_string(e, s) : -ENOMEM;
		json_decref(s);
	}
	if (ret < 0)
		return ret;
	if (!yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE) ||
	    (ret = emit(e, &ev)) < 0)
		return ret ? ret : -ENOMEM;
	for (i = 0; i < json_array_size(items) && ret == 0; i++) {
		json_t *v = list_item(json_array_get(items, i));

		ret = v ? emit_value(e, v) : -ENOMEM;
		json_decref(v);
	}
	if (ret < 0)
		return ret;
	yaml_sequence_end_event_initialize(&ev);
	if ((ret = emit(e, &ev)) < 0)
		return ret;
	yaml_mapping_end_event_initialize(&ev);
	return emit(e, &ev);
}

static int write_yaml(FILE *f, const json_t *value, const json_t *items)
{
	yaml_emitter_t e;
	yaml_event_t ev;
	int ret;

	if (!yaml_emitter_initialize(&e))
		return -ENOMEM;
	yaml_emitter_set_output_file(&e, f);
	yaml_emitter_set_unicode(&e, 1);
	yaml_emitter_set_indent(&e, 2);
	yaml_emitter_set_width(&e, -1);
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	ret = emit(&e, &ev);
	if (ret == 0) {
		yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
		ret = emit(&e, &ev);
	}
	if (ret == 0)
		ret = emit_document(&e, value, items);
	if (ret == 0) {
		yaml_document_end_event_initialize(&ev, 1);
		ret = emit(&e, &ev);
	}
	if (ret == 0) {
		yaml_stream_end_event_initialize(&ev);
		ret = emit(&e, &ev);
	}
	if (ret == 0 && !yaml_emitter_flush(&e))
		ret = -EIO;
	yaml_emitter_delete(&e);
	return ret;
}

int pk_write(FILE *f, const json_t *value, enum pk_format fmt)
{
	if (!f || !value)
		return -EINVAL;
	if (fmt == PK_FORMAT_YAML)
		return write_yaml(f, value, NULL);
	if (json_dumpf(value, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY) < 0)
		return -EIO;
	return fputc('\n', f) == EOF ? -EIO : 0;
}

char *pk_write_string(const json_t *value, enum pk_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int ret;

	if (!f)
		return NULL;
	ret = pk_write(f, value, fmt);
	if (fclose(f) != 0 || ret < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

json_t *pk_compact_object(const json_t *obj)
{
	char *text = pk_json_compact(obj, NULL);
	json_t *s = text ? json_string_nocheck(text) : NULL;

	free(text);
	return s;
}

/* One item as pk_write's JSON would indent it at depth 2 of a List. */
static int write_json_item(FILE *f, const json_t *item)
{
	json_t *v = list_item(item);
	char *text =
	    v ? json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY) : NULL;
	int ret = text ? 0 : -ENOMEM;

	json_decref(v);
	fputs("    ", f);
	for (const char *p = text; p && *p; p++)
		if ((*p == '\n' ? fputs("\n    ", f) : fputc(*p, f)) == EOF)
			ret = -EIO;
	free(text);
	return ret;
}

int pk_write_list(FILE *f, const json_t *items, enum pk_format fmt)
{
	size_t n = json_array_size(items);
	int ret = 0;

	if (!f || !json_is_array(items))
		return -EINVAL;
	if (fmt == PK_FORMAT_YAML)
		return write_yaml(f, NULL, items);
	fputs("{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"List\",\n  \"items\": [", f);
	for (size_t i = 0; i < n && ret == 0; i++) {
		fputs(i ? ",\n" : "\n", f);
		ret = write_json_item(f, json_array_get(items, i));
	}
	if (ret == 0)
		fputs(n ? "\n  ]\n}\n" : "]\n}\n", f);
	return ret == 0 && ferror(f) ? -EIO : ret;
}

json_t *pk_list_new(json_t *items)
{
	if (!items)
		items = json_array();
	return json_pack("{s:s, s:s, s:o}", "apiVersion", "v1", "kind", "List", "items", items);
}
