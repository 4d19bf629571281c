/*
 * seal.h: tamper evidence for contained-run artifacts.
 *
 * Each run writes, beside its artifact, a seal: the SHA-256 of the
 * artifact's exact bytes and a link to the previous run's seal in the same
 * runs root. The runs root keeps a chain head (the newest run and the
 * SHA-256 of its seal), updated under a lock, so runs form a hash chain:
 * editing an artifact breaks its seal; deleting or editing a whole run
 * (artifact and seal) breaks the next run's link or the head.
 *
 *   <runs-root>/<run-id>/contained-run.seal.json
 *     {"artifact":"contained-run.json","artifact_sha256":"<hex>",
 *      "previous":{"run_id":"...","seal_sha256":"<hex>"}|null,
 *      "run_id":"...","schema":"agentguard.evidence-seal","schema_version":1}
 *   <runs-root>/agentguard-chain-head.json
 *     {"run_id":"...","schema":"agentguard.evidence-chain-head",
 *      "schema_version":1,"seal_sha256":"<hex>"}
 * Both are canonical JSON (sorted keys, compact, ASCII) plus a newline;
 * a seal's SHA-256 is over its exact bytes.
 */
#ifndef AG_SEAL_H
#define AG_SEAL_H

#include "lib/base/ag.h"

struct ag_error;

#define AG_SEAL_FILE "contained-run.seal.json"
#define AG_CHAIN_HEAD_FILE "agentguard-chain-head.json"
#define AG_CHAIN_LOCK_FILE ".agentguard-chain.lock"

/*
 * Seals run `run_id` (a directory of runs_root_fd holding `artifact_name`):
 * under an exclusive lock of the runs root, reads the chain head, writes
 * the seal linking to it, then moves the head to this run. Reasons:
 * evidence.seal.io, evidence.seal.head_corrupt.
 */
int ag_seal_run(int runs_root_fd, const char *run_id, const char *artifact_name,
		struct ag_error **err);

#endif
