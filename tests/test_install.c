/* test_install.c — `make install DESTDIR=...` as an outside user meets it: only public
 * headers, pkg-config files that build a program against the static and the shared library. */
#define _GNU_SOURCE
#include <libgen.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

/* The tree and build directory this binary belongs to (SRC/B/tests/test_install) and a
 * scratch DESTDIR reach the commands as environment variables, never in a command line. */
static char dest[64] = "/tmp/taskhop-install.XXXXXX";

/* Runs a command line of /bin/sh with SRC, B, DEST, ROOT (DEST + PREFIX) and pkg-config's
 * search path in the environment; returns its exit status. */
static int sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	int rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

static int install_once(void **state)
{
	(void)state;
	char exe[PATH_MAX], root[128], pc[160];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0 || !mkdtemp(dest))
		return -1;
	exe[n] = 0;
	char *b = dirname(dirname(exe)); /* SRC/B */
	setenv("B", basename(b), 1);
	setenv("SRC", dirname(b), 1);
	snprintf(root, sizeof(root), "%s/usr/local", dest);
	snprintf(pc, sizeof(pc), "%s/lib/pkgconfig", root);
	setenv("DEST", dest, 1);
	setenv("ROOT", root, 1);
	setenv("PKG_CONFIG_PATH", pc, 1);
	setenv("PKG_CONFIG_SYSROOT_DIR", dest, 1);
	/* the outer make's jobserver is not ours to use */
	unsetenv("MAKEFLAGS");
	unsetenv("MFLAGS");
	unsetenv("MAKELEVEL");
	return sh("make -s -C \"$SRC\" install B=\"$B\" DESTDIR=\"$DEST\" PREFIX=/usr/local >/dev/null");
}

static int remove_install(void **state)
{
	(void)state;
	return sh("rm -rf \"$DEST\"");
}

static void installs_only_the_public_headers_under_include_taskhop(void **state)
{
	(void)state;
	assert_int_equal(sh("[ \"$(cd \"$ROOT/include/taskhop\" && ls | tr '\\n' ' ')\" = "
			    "\"dist.h policy.h record.h taskhop.h taskhop_abi.h \" ]"), 0);
}

static void installs_static_and_shared_libraries_with_a_soname_but_not_the_cli_library(void **state)
{
	(void)state;
	for (int i = 0; i < 3; i++) {
		const char *lib = (const char *[]){ "taskhop", "threcord", "thdist" }[i];
		if (sh("cd \"$ROOT/lib\" && [ -f lib%s.a ] && [ -L lib%s.so ] && "
		       "readelf -d lib%s.so | grep -q \"SONAME.*\\[lib%s.so.0\\]\"", lib, lib, lib, lib))
			fail_msg("lib%s: no .a, no .so link, or no soname lib%s.so.0", lib, lib);
	}
	assert_int_not_equal(sh("[ -e \"$ROOT/lib/libthtools.a\" ]"), 0);
	assert_int_equal(sh("[ -x \"$ROOT/bin/taskhop\" ]"), 0);
}

/* nm lists what each library exports: only names in th_ (internals are th__). */
static void shared_libraries_export_only_th_names(void **state)
{
	(void)state;
	assert_int_equal(sh("for l in \"$ROOT\"/lib/lib*.so.0; do nm -D --defined-only \"$l\" | "
			    "awk '{print $3}' | grep -v \"^th_[a-z]\" && exit 1; done; exit 0"), 0);
}

/* The README's outside program: darts tasks; prints their hits sum and the policy. */
static const char prog[] =
	"#include <stdio.h>\n"
	"#include <taskhop/taskhop.h>\n"
	"static void *darts(void *arg) {\n"
	"	long hits = 0;\n"
	"	for (int i = 0; i < 4; i++) { th_yield(); hits += (long)arg; }\n"
	"	return (void *)hits;\n"
	"}\n"
	"int main(int argc, char **argv) {\n"
	"	struct th_config cfg;\n"
	"	th_config_default(&cfg);\n"
	"	cfg.workers = 2;\n"
	"	if (argc > 1) cfg.policy = argv[1];\n"
	"	if (th_runtime_start(&cfg) != 0) return fprintf(stderr, \"%s\\n\", th_last_error()), 1;\n"
	"	th_task *t[8]; long sum = 0;\n"
	"	for (long i = 0; i < 8; i++) t[i] = th_spawn(darts, (void *)i);\n"
	"	for (int i = 0; i < 8; i++) { sum += (long)th_fetch(t[i]); th_task_free(t[i]); }\n"
	"	printf(\"%s %ld\\n\", th_policy_name(), sum);\n"
	"	th_runtime_stop();\n"
	"	return 0;\n"
	"}\n";

static void write_prog(void)
{
	char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s/prog.c", dest);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(prog, f);
	fclose(f);
}

static void an_outside_program_builds_with_pkg_config_against_the_shared_library(void **state)
{
	(void)state;
	write_prog();
	assert_int_equal(sh("cd \"$DEST\" && cc -o prog_shared prog.c $(pkg-config --cflags --libs taskhop)"), 0);
	assert_int_equal(sh("cd \"$DEST\" && LD_LIBRARY_PATH=\"$ROOT/lib\" ldd prog_shared | "
			    "grep -q \"libtaskhop.so.0 => $ROOT/lib/\""), 0);
	assert_int_equal(sh("cd \"$DEST\" && [ \"$(LD_LIBRARY_PATH=\"$ROOT/lib\" ./prog_shared)\" = \"shared 112\" ]"), 0);
}

static void an_outside_program_builds_with_pkg_config_against_the_static_library(void **state)
{
	(void)state;
	write_prog();
	assert_int_equal(sh("cd \"$DEST\" && cc -o prog_static prog.c "
			    "$(pkg-config --cflags --libs --static taskhop | sed \"s/-ltaskhop/-l:libtaskhop.a/\")"), 0);
	assert_int_not_equal(sh("cd \"$DEST\" && ldd prog_static | grep -q libtaskhop"), 0);
	assert_int_equal(sh("cd \"$DEST\" && [ \"$(./prog_static)\" = \"shared 112\" ]"), 0);
}

/* The example plugin, built from the installed header alone, loads into both programs. */
static void an_outside_policy_plugin_loads_into_static_and_shared_programs(void **state)
{
	(void)state;
	assert_int_equal(sh("cd \"$DEST\" && cc -shared -fPIC -o lifo.so $(pkg-config --cflags taskhop) "
			    "\"$SRC/tools/examples/policy_lifo.c\""), 0);
	assert_int_equal(sh("cd \"$DEST\" && [ \"$(./prog_static ./lifo.so)\" = \"lifo 112\" ] && "
			    "[ \"$(LD_LIBRARY_PATH=\"$ROOT/lib\" ./prog_shared ./lifo.so)\" = \"lifo 112\" ]"), 0);
}

int main(void)
{
#if !defined(TASKHOP_SAN_none)
	/* The outside program links the installed libraries without sanitizer flags. */
	printf("[  SKIPPED ] 1 test(s): installing is checked in the build without SAN\n");
	return 0;
#endif
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(installs_only_the_public_headers_under_include_taskhop),
		cmocka_unit_test(installs_static_and_shared_libraries_with_a_soname_but_not_the_cli_library),
		cmocka_unit_test(shared_libraries_export_only_th_names),
		cmocka_unit_test(an_outside_program_builds_with_pkg_config_against_the_shared_library),
		cmocka_unit_test(an_outside_program_builds_with_pkg_config_against_the_static_library),
		cmocka_unit_test(an_outside_policy_plugin_loads_into_static_and_shared_programs),
	};
	return cmocka_run_group_tests(tests, install_once, remove_install);
}
