/*
 * qjsbench runs one JavaScript program, natively, in QuickJS-NG built from
 * the same qjs-src as the guest (scripts/qjs-native.sh builds it twice:
 * switch dispatch and computed goto). Usage: qjsbench FILE RUNS. It
 * evaluates FILE's script RUNS times in one context, each timed with
 * CLOCK_MONOTONIC around JS_Eval alone, and prints one line per run:
 * "<nanoseconds> <the result as JSON>". The first run is the bench's
 * warm-up. Exit status 1 on an exception or a bad argument.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "quickjs.h"

static char *slurp(const char *path, size_t *len) {
	FILE *f = fopen(path, "rb");
	if (!f) return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fclose(f);
	buf[n] = 0;
	*len = (size_t)n;
	return buf;
}

static long long now_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: qjsbench FILE RUNS\n");
		return 2;
	}
	int runs = atoi(argv[2]);
	size_t len;
	char *src = slurp(argv[1], &len);
	if (!src || runs < 1 || runs > 100000) {
		fprintf(stderr, "qjsbench: cannot read %s, or RUNS %s is not 1 to 100000\n", argv[1], argv[2]);
		return 2;
	}
	JSRuntime *rt = JS_NewRuntime();
	JSContext *ctx = JS_NewContext(rt);
	for (int i = 0; i < runs; i++) {
		long long t0 = now_ns();
		JSValue v = JS_Eval(ctx, src, len, "<bench>", JS_EVAL_TYPE_GLOBAL);
		long long t1 = now_ns();
		if (JS_IsException(v)) {
			JSValue e = JS_GetException(ctx);
			const char *msg = JS_ToCString(ctx, e);
			fprintf(stderr, "qjsbench: exception: %s\n", msg ? msg : "?");
			return 1;
		}
		JSValue json = JS_JSONStringify(ctx, v, JS_UNDEFINED, JS_UNDEFINED);
		const char *s = JS_ToCString(ctx, json);
		printf("%lld %s\n", t1 - t0, s ? s : "undefined");
		JS_FreeCString(ctx, s);
		JS_FreeValue(ctx, json);
		JS_FreeValue(ctx, v);
	}
	fflush(stdout);
	JS_FreeContext(ctx);
	JS_FreeRuntime(rt);
	free(src);
	return 0;
}
