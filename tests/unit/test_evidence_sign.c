/*
 * Evidence signatures and the signed seal: Ed25519 keys (create, refuse an
 * unsafe key file, keygen never overwrites), sign and check exact bytes,
 * a seal that links only to a head signed by the same key (new segment
 * otherwise, with its reason), and the bounded, cancellable chain lock.
 * Real files in a temporary directory; whole runs are in t0580/t0581.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/base/ag.h"
#include "lib/base/error.h"
#include "lib/evidence/seal.h"
#include "lib/evidence/sign.h"

#include <signal.h>
#include <stdlib.h>
#include <ftw.h>
#include <sys/file.h>
#include <sys/stat.h>

static char dir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof(dir), "/tmp/ag-sign-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	if (flag == FTW_DP)
		chmod(p, 0700);
	return remove(p);
}

static int teardown(void **state)
{
	(void)state;
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static char *at(const char *name)
{
	return ag_xasprintf("%s/%s", dir, name);
}

/* ep, not *ep: the call in the first argument fills it (evaluation order). */
static const char *reason_of(int rc, struct ag_error **ep)
{
	static char r[64];
	snprintf(r, sizeof(r), "%s", rc == 0 ? "ok" : *ep ? (*ep)->reason : "?");
	ag_error_free(*ep);
	*ep = NULL;
	return r;
}

static void test_keys(void **state)
{
	(void)state;
	_cleanup_free_ char *kp = at("state/agentguard/signing-key.pem");
	struct ag_sign_key *k = NULL, *k2 = NULL, *pub = NULL;
	struct ag_error *e = NULL;
	bool created = false;
	assert_string_equal(reason_of(ag_sign_key_load(kp, 0, &k, NULL, &e), &e),
			    "evidence.key.missing");
	assert_int_equal(ag_sign_key_load(kp, AG_SIGN_CREATE, &k, &created, &e), 0);
	assert_true(created);
	struct stat st;
	assert_int_equal(stat(kp, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	_cleanup_free_ char *kd = at("state/agentguard");
	assert_int_equal(stat(kd, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(ag_sign_key_load(kp, AG_SIGN_CREATE, &k2, &created, &e), 0);
	assert_false(created);
	assert_string_equal(ag_sign_key_fingerprint(k), ag_sign_key_fingerprint(k2));
	assert_int_equal(strlen(ag_sign_key_fingerprint(k)), AG_SIGN_FPR_LEN);
	assert_string_equal(reason_of(ag_sign_key_generate(kp, &e), &e), "evidence.key.exists");

	/* sign and check exact bytes; any change fails */
	char sig[AG_SIGN_B64_LEN + 1];
	assert_int_equal(ag_sign(k, "seal bytes\n", 11, sig, &e), 0);
	assert_true(ag_sign_check(k2, "seal bytes\n", 11, sig));
	assert_false(ag_sign_check(k2, "seal bytes!", 11, sig));
	sig[3] = sig[3] == 'A' ? 'B' : 'A';
	assert_false(ag_sign_check(k2, "seal bytes\n", 11, sig));
	assert_false(ag_sign_check(k2, "seal bytes\n", 11, "short"));

	/* the public half round-trips and cannot sign */
	char *pem = ag_sign_key_public_pem(k);
	assert_non_null(strstr(pem, "BEGIN PUBLIC KEY"));
	_cleanup_free_ char *pp = at("pub.pem");
	FILE *f = fopen(pp, "w");
	fputs(pem, f);
	fclose(f);
	free(pem);
	assert_int_equal(ag_sign_pubkey_load(pp, &pub, &e), 0);
	assert_string_equal(ag_sign_key_fingerprint(pub), ag_sign_key_fingerprint(k));
	assert_int_equal(ag_sign(k, "x", 1, sig, &e), 0);
	assert_true(ag_sign_check(pub, "x", 1, sig));
	assert_string_equal(reason_of(ag_sign(pub, "x", 1, sig, &e), &e), "evidence.sign");
	const struct ag_sign_key *const keys[] = {pub};
	const struct ag_trust t = {keys, 1};
	assert_ptr_equal(ag_trust_find(&t, ag_sign_key_fingerprint(k)), pub);
	assert_null(ag_trust_find(&t, "ed25519:00"));

	/* unsafe key files are refused */
	struct ag_sign_key *k3 = NULL;
	assert_int_equal(chmod(kp, 0640), 0);
	assert_string_equal(reason_of(ag_sign_key_load(kp, 0, &k3, NULL, &e), &e),
			    "evidence.key.mode");
	assert_null(k3);
	assert_int_equal(chmod(kp, 0600), 0);
	_cleanup_free_ char *lp = at("state/agentguard/link.pem");
	assert_int_equal(symlink("signing-key.pem", lp), 0);
	assert_string_equal(reason_of(ag_sign_key_load(lp, 0, &k3, NULL, &e), &e),
			    "evidence.key.link");
	assert_int_equal(chmod(kd, 0777), 0);
	assert_string_equal(reason_of(ag_sign_key_load(kp, 0, &k3, NULL, &e), &e),
			    "evidence.key.dir");
	assert_int_equal(chmod(kd, 0700), 0);
	ag_sign_key_free(k);
	ag_sign_key_free(k2);
	ag_sign_key_free(pub);
}

static int make_run(int root, const char *id)
{
	if (mkdirat(root, id, 0700) < 0)
		return -1;
	int fd = openat(root, id, O_RDONLY | O_DIRECTORY);
	int a = openat(fd, "contained-run.json", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	(void)!write(a, "{}\n", 3);
	close(a);
	return fd;
}

static void test_seal_chain_and_lock(void **state)
{
	(void)state;
	_cleanup_free_ char *k1p = at("k1.pem"), *k2p = at("k2.pem"), *rp = at("runs");
	struct ag_sign_key *k1 = NULL, *k2 = NULL;
	struct ag_error *e = NULL;
	assert_int_equal(ag_sign_key_generate(k1p, &e), 0);
	assert_int_equal(ag_sign_key_generate(k2p, &e), 0);
	assert_int_equal(ag_sign_key_load(k1p, 0, &k1, NULL, &e), 0);
	assert_int_equal(ag_sign_key_load(k2p, 0, &k2, NULL, &e), 0);
	assert_int_equal(mkdir(rp, 0700), 0);
	int root = open(rp, O_RDONLY | O_DIRECTORY);
	struct ag_seal_opts o = {.key = k1, .lock_wait_ms = 200};
	struct ag_seal_result r;

	close(make_run(root, "r1"));
	assert_int_equal(ag_seal_run(root, "r1", "contained-run.json", &o, &r, &e), 0);
	assert_string_equal(r.chain_start, "empty");
	close(make_run(root, "r2"));
	assert_int_equal(ag_seal_run(root, "r2", "contained-run.json", &o, &r, &e), 0);
	assert_null(r.chain_start); /* linked */

	/* another key does not extend k1's head; k1 then does not extend k2's */
	struct ag_seal_opts o2 = {.key = k2, .lock_wait_ms = 200};
	close(make_run(root, "r3"));
	assert_int_equal(ag_seal_run(root, "r3", "contained-run.json", &o2, &r, &e), 0);
	assert_string_equal(r.chain_start, "head_foreign_key");
	close(make_run(root, "r4"));
	assert_int_equal(ag_seal_run(root, "r4", "contained-run.json", &o, &r, &e), 0);
	assert_string_equal(r.chain_start, "head_foreign_key");

	/* an unsigned head run, a broken signature, a malformed head */
	int r4 = openat(root, "r4", O_RDONLY | O_DIRECTORY);
	assert_int_equal(renameat(r4, "contained-run.seal.sig", r4, "sig.bak"), 0);
	close(make_run(root, "r5"));
	assert_int_equal(ag_seal_run(root, "r5", "contained-run.json", &o, &r, &e), 0);
	assert_string_equal(r.chain_start, "head_unsigned");
	close(r4);
	int h = openat(root, "agentguard-chain-head.json", O_WRONLY | O_TRUNC);
	(void)!write(h, "junk", 4);
	close(h);
	close(make_run(root, "r6"));
	assert_int_equal(ag_seal_run(root, "r6", "contained-run.json", &o, &r, &e), 0);
	assert_string_equal(r.chain_start, "head_malformed");

	/* the lock: bounded wait, then a named failure; a cancel ends it early */
	int lk = openat(root, ".agentguard-chain.lock", O_RDWR);
	assert_int_equal(flock(lk, LOCK_EX), 0);
	close(make_run(root, "r7"));
	assert_string_equal(
	    reason_of(ag_seal_run(root, "r7", "contained-run.json", &o, &r, &e), &e),
	    "evidence.seal.lock_timeout");
	volatile sig_atomic_t cancel = SIGTERM;
	struct ag_seal_opts oc = {.key = k1, .lock_wait_ms = 60000, .cancel = &cancel};
	assert_string_equal(
	    reason_of(ag_seal_run(root, "r7", "contained-run.json", &oc, &r, &e), &e),
	    "evidence.seal.cancelled");
	assert_int_equal(
	    ag_seal_run_unchained(root, "r7", "contained-run.json", k1, "cancelled", &e), 0);
	close(lk);
	ag_sign_key_free(k1);
	ag_sign_key_free(k2);
	close(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_keys),
	    cmocka_unit_test(test_seal_chain_and_lock),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
