/* libFuzzer target: the plugin loader. Each input is written as a plugin
 * file, libgllmk-fuzz.so, in a directory of its own (the loader keeps every
 * file that loaded for the life of the process, keyed by its path), and
 * gllmk_survey and gllmk_open are asked for it by name. Whatever the file
 * holds, they must return: a verdict and a reason for the survey, a status
 * and a message for the open, never a crash.
 *
 * The seeds (tests/fuzz/corpus/loader and the fake plugins scripts/run-fuzz
 * adds from the build) make the mutations ELF-ish: headers, program and
 * dynamic sections, version tables. A file the dynamic loader maps runs its
 * constructors, and neither glibc's dynamic loader nor a plugin's own code
 * is hardened against a mutated file (the first minute of fuzzing crashes
 * in ld.so's relocation and in a mutated _init). That is the trust a
 * plugin directory carries (SPEC/ABI.md §1), not gllmk's code. So each
 * input first runs in a forked child (the whole survey and open, its
 * sanitizer report captured); a child that dies in the core (the first
 * frame of its report past the sanitizer runtime and libc is in core/) is
 * a finding, one that dies elsewhere is skipped,
 * and an input the child survived runs again here, where libFuzzer sees
 * its coverage and the checks below run.
 */
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <sanitizer/common_interface_defs.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fuzz_common.h"

static char root[256];
static unsigned long n_inputs;

/* Every file that loaded stays mapped, and at exit its destructors would
 * run here: a mutated one crashes the fuzzer after the run. Destructors are
 * the file's code, not gllmk's, so the process leaves without them. */
static void leave_without_destructors(int status, void *arg)
{
	(void)arg;
	rmdir(root); /* each input's folder is removed after it */
	_exit(status);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	on_exit(leave_without_destructors, NULL);
	snprintf(root, sizeof(root), "%s/gllmk-fuzz-loader-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root))
		abort();
	return 0;
}

static void survey_and_open(const gllmk_options *o)
{
	gllmk_report *r = NULL;
	gllmk_context *ctx = NULL;

	if (gllmk_survey(o, &r) == GLLMK_OK)
		gllmk_report_free(r);
	if (gllmk_open(o, &ctx) == GLLMK_OK)
		gllmk_close(ctx);
}

/* The first frame of a sanitizer report that is not the runtime or libc
 * (an interceptor such as memcpy is the core's fault, not libc's). */
static int died_in_core(const char *report)
{
	static const char *const skip[] = {"compiler-rt", "sanitizer", "asan_", "ubsan", "sysdeps", "libc.so", "/string/"};

	for (const char *line = strstr(report, "    #0 "); line; line = strstr(line + 1, "\n    #")) {
		const char *end = strchr(line + 1, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char frame[1024];
		int runtime = 0;

		snprintf(frame, sizeof(frame), "%.*s", (int)(len < sizeof(frame) - 1 ? len : sizeof(frame) - 1), line);
		for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
			runtime |= strstr(frame, skip[i]) != NULL;
		if (!runtime)
			return strstr(frame, "/core/") != NULL;
	}
	return 0;
}

/* What the sanitizer runtime does to every mapped module when it lists
 * them (a report's symbolization, libFuzzer's NEW_FUNC lines, the leak
 * check): read the program headers and the notes they point at. A
 * mutated file that the dynamic loader mapped but whose PT_NOTE points
 * outside it crashes that listing in the parent, inside the runtime, and
 * the crash report then deadlocks re-listing the modules (seen in CI as a
 * hung, then failed, loader target). The child does it first, so such a
 * file dies there and is skipped like any crash in the file's own code. */
static int touch_notes(struct dl_phdr_info *info, size_t size, void *sum)
{
	(void)size;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const volatile uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);

		if (ph->p_type == PT_NOTE)
			for (ElfW(Xword) k = 0; k < ph->p_memsz; k++)
				*(unsigned *)sum += p[k];
	}
	return 0;
}

/* Runs the survey and open in a child; 1 if it returned. A child that died
 * with the core on its stack is a finding (its report is printed). */
static int child_survives(const gllmk_options *o)
{
	static char report[1 << 16];
	size_t n = 0;
	ssize_t k;
	int status = 0, fds[2];
	pid_t pid, w = 0;

	if (pipe(fds))
		abort();
	pid = fork();
	if (pid < 0)
		abort();
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		/* the sanitizer reports and dies; libFuzzer's death callback
		 * would also save the input as a crash artifact */
		__sanitizer_set_death_callback(NULL);
		alarm(5); /* a mutated plugin's code can spin: skipped like a crash in it */
		survey_and_open(o);
		unsigned sum = 0;
		dl_iterate_phdr(touch_notes, &sum);
		_exit(0); /* not exit: libFuzzer's exit hook calls any exit a finding */
	}
	close(fds[1]);
	while ((k = read(fds[0], report + n, sizeof(report) - 1 - n)) > 0)
		n += (size_t)k;
	close(fds[0]);
	report[n] = '\0';
	if (getenv("FUZZ_LOADER_VERBOSE"))
		fputs(report, stderr);
	/* the child's alarm does not end every hang (a mutated plugin closed
	 * its stderr and then outlived the alarm: a 30 s libFuzzer timeout,
	 * 2026-11-27), so the parent ends one that is still there after 10 s,
	 * and skips it like a spin */
	for (int tries = 0; tries < 100 && (w = waitpid(pid, &status, WNOHANG)) == 0; tries++)
		usleep(100000);
	if (w == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return 0;
	}
	if (w == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 1;
	FUZZ_CHECK(!died_in_core(report), "the child died in the core:\n%s", report);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dir[320], path[400];
	gllmk_options o = {.struct_size = sizeof(o), .flags = GLLMK_OPEN_NO_ENV | GLLMK_OPEN_NO_LAYERS, .plugins = "fuzz"};
	gllmk_report *r = NULL;
	gllmk_context *ctx = NULL;
	gllmk_status st;
	FILE *f;

	snprintf(dir, sizeof(dir), "%s/%lu", root, n_inputs++);
	snprintf(path, sizeof(path), "%s/libgllmk-fuzz.so", dir);
	if (mkdir(dir, 0700) || !(f = fopen(path, "wb")))
		abort();
	if (fwrite(data, 1, size, f) != size || fclose(f))
		abort();
	o.plugin_dir = dir;
	if (!child_survives(&o))
		goto out;

	st = gllmk_survey(&o, &r);
	FUZZ_CHECK(st == GLLMK_OK || st == GLLMK_E_NO_PLUGIN, "gllmk_survey: %s", gllmk_status_string(st));
	if (r) {
		const gllmk_plugin_report *pr = NULL;

		for (size_t i = 0; i < r->count; i++)
			if (!strcmp(r->plugins[i].name, "fuzz"))
				pr = &r->plugins[i];
		FUZZ_CHECK(pr, "gllmk_survey: the plugin asked for is not in the report");
		FUZZ_CHECK(pr->reason && pr->reason[0], "gllmk_survey: no reason for the verdict %s",
			   gllmk_verdict_string(pr->verdict));
		gllmk_report_free(r);
	}
	st = gllmk_open(&o, &ctx);
	if (st == GLLMK_OK)
		gllmk_close(ctx);
	else
		FUZZ_CHECK(gllmk_last_error()[0], "gllmk_open failed (%s) without a message", gllmk_status_string(st));
out:
	unlink(path);
	rmdir(dir);
	return 0;
}
