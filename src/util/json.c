// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * json.c - reading and writing JSON through jansson (see json.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/json.h"

#define JSON_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10))

int json_write_file(const json_t *doc, const char *path)
{
	char tmp[PATH_MAX];
	int fd, ret = 0;

	if (!strcmp(path, "-")) {
		if (json_dumpf(doc, stdout, JSON_FLAGS) || fputc('\n', stdout) == EOF ||
		    fflush(stdout))
			return -EIO;
		return 0;
	}
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	if (json_dumpfd(doc, fd, JSON_FLAGS) || write(fd, "\n", 1) != 1)
		ret = errno ? -errno : -EIO;
	/* mkstemp makes 0600; a result file is as readable as any other output. */
	if (!ret && fchmod(fd, 0644))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, path))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

int json_read_file(const char *path, json_t **out, char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *doc;
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	struct stat st;

	if (!f) {
		int e = errno;

		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	if (f != stdin && (fstat(fileno(f), &st) || !S_ISREG(st.st_mode))) {
		int e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;

		snprintf(err, errlen, "%s: %s", path, e == EISDIR ? strerror(e) :
			 "not a regular file");
		fclose(f);
		return -e;
	}
	doc = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
	if (f != stdin)
		fclose(f);
	if (!doc) {
		snprintf(err, errlen, "%s:%d:%d: %s", path, jerr.line, jerr.column, jerr.text);
		return -EINVAL;
	}
	*out = doc;
	return 0;
}

int json_check_writable(const char *path)
{
	char dir[PATH_MAX], *slash;
	struct stat st;

	if (!strcmp(path, "-"))
		return 0;
	if (!*path)
		return -ENOENT;
	if (!stat(path, &st)) {
		if (S_ISDIR(st.st_mode))
			return -EISDIR;
		return access(path, W_OK) ? -errno : 0;
	}
	if (errno != ENOENT)
		return -errno;
	if ((size_t)snprintf(dir, sizeof(dir), "%s", path) >= sizeof(dir))
		return -ENAMETOOLONG;
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (stat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return access(dir, W_OK | X_OK) ? -errno : 0;
}

void json_set_str(json_t *obj, const char *key, const char *val)
{
	json_object_set_new(obj, key, val ? json_string(val) : json_null());
}

void json_set_u64(json_t *obj, const char *key, uint64_t val)
{
	/* json_int_t is long long: the values we write (counts, ns) fit. */
	json_object_set_new(obj, key, json_integer((json_int_t)val));
}

void json_set_i64(json_t *obj, const char *key, int64_t val)
{
	json_object_set_new(obj, key, json_integer((json_int_t)val));
}

void json_set_double(json_t *obj, const char *key, double val)
{
	json_object_set_new(obj, key, isfinite(val) ? json_real(val) : json_null());
}

void json_set_bool(json_t *obj, const char *key, bool val)
{
	json_object_set_new(obj, key, json_boolean(val));
}

void json_set_new(json_t *obj, const char *key, json_t *val)
{
	json_object_set_new(obj, key, val);
}

void json_push_new(json_t *arr, json_t *val)
{
	json_array_append_new(arr, val);
}

static const json_t *member(const json_t *obj, const char *key)
{
	return json_is_object(obj) ? json_object_get(obj, key) : NULL;
}

int json_get_str(const json_t *obj, const char *key, const char **out)
{
	const json_t *v = member(obj, key);

	if (!v)
		return -ENOENT;
	if (!json_is_string(v))
		return -EINVAL;
	*out = json_string_value(v);
	return 0;
}

int json_get_i64(const json_t *obj, const char *key, int64_t *out)
{
	const json_t *v = member(obj, key);

	if (!v)
		return -ENOENT;
	if (!json_is_integer(v))
		return -EINVAL;
	*out = json_integer_value(v);
	return 0;
}

int json_get_u64(const json_t *obj, const char *key, uint64_t *out)
{
	int64_t v;
	int ret = json_get_i64(obj, key, &v);

	if (ret)
		return ret;
	if (v < 0)
		return -EINVAL;
	*out = (uint64_t)v;
	return 0;
}

int json_get_double(const json_t *obj, const char *key, double *out)
{
	const json_t *v = member(obj, key);

	if (!v)
		return -ENOENT;
	if (!json_is_number(v))
		return -EINVAL;
	*out = json_number_value(v);
	return 0;
}

int json_get_bool(const json_t *obj, const char *key, bool *out)
{
	const json_t *v = member(obj, key);

	if (!v)
		return -ENOENT;
	if (!json_is_boolean(v))
		return -EINVAL;
	*out = json_is_true(v);
	return 0;
}
