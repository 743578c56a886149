/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * json.h - the one way vmalock reads and writes JSON: jansson (Debian's
 * libjansson), behind a few helpers that give errors as negative errnos
 * with a message, write files atomically, and turn what JSON cannot hold
 * (NaN, infinities: a statistic of an empty sample) into null.
 *
 * Documents are built with jansson's own constructors and the setters
 * below; jansson escapes every string it writes. Tools only: this file is
 * not part of libvmalock (the library never prints).
 */
#ifndef VML_UTIL_JSON_H
#define VML_UTIL_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * json_write_file - write @doc to @path (indented, keys in insertion order),
 * through a temporary file in the same directory and a rename, so a reader
 * never sees half a document and a failed write leaves the old file. "-"
 * writes to standard output.
 * Return: 0 or -errno.
 */
int json_write_file(const json_t *doc, const char *path);

/*
 * json_read_file - parse @path ("-": standard input). On failure @err gets
 * "PATH:LINE:COL: what" (or the errno's text).
 * Return: 0 and a new reference in *@out; -errno (-EINVAL: not JSON).
 */
int json_read_file(const char *path, json_t **out, char *err, size_t errlen);

/* Can @path be created or replaced? Checked before a long run. Return: 0 or -errno. */
int json_check_writable(const char *path);

/* Setters: steal nothing, copy the value; a non-finite double becomes null. */
void json_set_str(json_t *obj, const char *key, const char *val);
void json_set_u64(json_t *obj, const char *key, uint64_t val);
void json_set_i64(json_t *obj, const char *key, int64_t val);
void json_set_double(json_t *obj, const char *key, double val);
void json_set_bool(json_t *obj, const char *key, bool val);
/* Append/attach @val and drop the caller's reference (jansson's _new variants). */
void json_set_new(json_t *obj, const char *key, json_t *val);
void json_push_new(json_t *arr, json_t *val);

/*
 * Getters for reading our own documents back: 0 and the value, -ENOENT if
 * @key is absent, -EINVAL if it has another type (an integer is accepted
 * for a double). Strings point into @obj.
 */
int json_get_str(const json_t *obj, const char *key, const char **out);
int json_get_u64(const json_t *obj, const char *key, uint64_t *out);
int json_get_i64(const json_t *obj, const char *key, int64_t *out);
int json_get_double(const json_t *obj, const char *key, double *out);
int json_get_bool(const json_t *obj, const char *key, bool *out);

#endif /* VML_UTIL_JSON_H */
