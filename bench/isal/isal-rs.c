/*
 * ISA-L Reed-Solomon timing harness for `npm run bench:codec` (bench/isal/isal.ts builds and
 * runs it). Single thread. For one RS(k, m) and shard size it times, per ISA-L entry point:
 *
 *   encode       ec_encode_data over k data shards -> m parity shards (tables prepared once)
 *   reconstruct  the first m data shards lost: decode matrix from the k surviving shards
 *                (inverted once, as Strata's decode cache does), then ec_encode_data of the
 *                m lost rows from those k shards
 *
 * Entry points: "sse" (ec_encode_data_sse, 128-bit, called explicitly) and "dispatch"
 * (ec_encode_data, ISA-L's own choice for this CPU: AVX2 or AVX-512 where present).
 *
 * Usage: isal-rs K M SHARD_BYTES RUNS MIN_MS CLOCK     (CLOCK: cpu | wall)
 * Output: one JSON object on stdout; rates are MB/s (1e6 bytes) of data bytes (k * shard),
 * one per run after a discarded warm-up run, the same convention as bench/lib/timing.ts;
 * "cpu" times by the process's CPU time (as bench/codec-rs-timing.ts does for Strata),
 * "wall" by the monotonic clock.
 * Exit 2 on bad arguments, 3 if the decode matrix is singular or memory runs out.
 */
#include <isa-l/erasure_code.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Largest k + m accepted: GF(2^8) Cauchy matrices stay invertible up to 256 shards. */
#define MAX_SHARDS 256
/* Most runs recorded, to bound the output and the argument a caller can pass. */
#define MAX_RUNS 100

/*
 * Clears the upper halves of the vector registers before every call. Once they are dirty
 * (ISA-L's AVX2/AVX-512 code, glibc's string functions, or a context switch restoring a state
 * that used them), legacy-SSE code was measured here at about half its speed (2.8 against
 * 5.0 GB/s for RS(10,4) encode), so the SSE rows would otherwise time the transition penalty,
 * not ISA-L. One vzeroupper per call of a millisecond or so costs nothing measurable.
 */
__attribute__((target("avx"))) static void clean_upper_state(void) { __builtin_ia32_vzeroupper(); }

typedef void (*encode_fn)(int, int, int, unsigned char *, unsigned char **, unsigned char **);

static clockid_t timing_clock = CLOCK_MONOTONIC;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(timing_clock, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Calls fn(len, k, rows, tbls, in, out) for about min_ms, runs + 1 times; prints the rates. */
static void time_op(const char *impl, const char *op, encode_fn fn, int len, int k, int rows,
                    unsigned char *tbls, unsigned char **in, unsigned char **out, int runs,
                    double min_ms, double data_mb, int *first) {
  printf("%s{\"impl\":\"%s\",\"op\":\"%s\",\"mbps\":[", *first ? "" : ",", impl, op);
  *first = 0;
  int avx = __builtin_cpu_supports("avx");
  for (int r = -1; r < runs; r++) {
    long n = 0;
    double t0 = now_ms(), t;
    do {
      if (avx) clean_upper_state();
      fn(len, k, rows, tbls, in, out);
      n++;
      t = now_ms();
    } while (t - t0 < min_ms);
    if (r >= 0) printf("%s%.1f", r ? "," : "", n * data_mb / ((t - t0) / 1e3));
  }
  printf("]}");
}

static unsigned char *alloc_shard(size_t len) {
  void *p = NULL;
  if (posix_memalign(&p, 64, len) != 0) {
    fprintf(stderr, "isal-rs: out of memory\n");
    exit(3);
  }
  return p;
}

int main(int argc, char **argv) {
  if (argc != 7 || (strcmp(argv[6], "cpu") != 0 && strcmp(argv[6], "wall") != 0)) {
    fprintf(stderr, "usage: isal-rs K M SHARD_BYTES RUNS MIN_MS cpu|wall\n");
    return 2;
  }
  if (strcmp(argv[6], "cpu") == 0) timing_clock = CLOCK_PROCESS_CPUTIME_ID;
  int k = atoi(argv[1]), m = atoi(argv[2]), len = atoi(argv[3]), runs = atoi(argv[4]);
  double min_ms = atof(argv[5]);
  if (k < 1 || m < 1 || k + m > MAX_SHARDS || len < 1 || runs < 1 || runs > MAX_RUNS ||
      !(min_ms > 0) || m > k) {
    fprintf(stderr, "isal-rs: need 1 <= m <= k, k + m <= %d, shard >= 1, 1 <= runs <= %d\n",
            MAX_SHARDS, MAX_RUNS);
    return 2;
  }
  int n = k + m;
  unsigned char *enc = calloc((size_t)n * k, 1), *dec = calloc((size_t)k * k, 1);
  unsigned char *inv = calloc((size_t)k * k, 1), *rec = calloc((size_t)m * k, 1);
  unsigned char *enc_tbls = calloc((size_t)m * k * 32, 1), *rec_tbls = calloc((size_t)m * k * 32, 1);
  unsigned char *shards[MAX_SHARDS], *lost[MAX_SHARDS], *survivors[MAX_SHARDS];
  if (!enc || !dec || !inv || !rec || !enc_tbls || !rec_tbls) {
    fprintf(stderr, "isal-rs: out of memory\n");
    return 3;
  }
  unsigned int x = 2463534242u;
  for (int i = 0; i < n; i++) {
    shards[i] = alloc_shard(len);
    for (int b = 0; b < len; b++) {
      x ^= x << 13, x ^= x >> 17, x ^= x << 5;
      shards[i][b] = (unsigned char)x;
    }
  }
  for (int i = 0; i < m; i++) lost[i] = alloc_shard(len);

  /* Systematic Cauchy matrix: rows 0..k-1 identity, rows k..n-1 parity. */
  gf_gen_cauchy1_matrix(enc, n, k);
  ec_init_tables(k, m, enc + k * k, enc_tbls);
  ec_encode_data(len, k, m, enc_tbls, shards, shards + k);

  /* Lose data shards 0..m-1; survivors are shards m..m+k-1 (data m..k-1, then parity). */
  for (int i = 0; i < k; i++) {
    memcpy(dec + i * k, enc + (size_t)(i + m) * k, k);
    survivors[i] = shards[i + m];
  }
  if (gf_invert_matrix(dec, inv, k) != 0) {
    fprintf(stderr, "isal-rs: decode matrix singular\n");
    return 3;
  }
  memcpy(rec, inv, (size_t)m * k); /* row i of the inverse rebuilds data shard i */
  ec_init_tables(k, m, rec, rec_tbls);

  double data_mb = (double)k * len / 1e6;
  printf("{\"k\":%d,\"m\":%d,\"shard\":%d,\"clock\":\"%s\",\"rows\":[", k, m, len, argv[6]);
  int first = 1;
  time_op("sse", "encode", ec_encode_data_sse, len, k, m, enc_tbls, shards, shards + k, runs,
          min_ms, data_mb, &first);
  time_op("sse", "reconstruct", ec_encode_data_sse, len, k, m, rec_tbls, survivors, lost, runs,
          min_ms, data_mb, &first);
  time_op("dispatch", "encode", ec_encode_data, len, k, m, enc_tbls, shards, shards + k, runs,
          min_ms, data_mb, &first);
  time_op("dispatch", "reconstruct", ec_encode_data, len, k, m, rec_tbls, survivors, lost, runs,
          min_ms, data_mb, &first);
  printf("]");
  /* The rebuilt shards must equal the lost ones, or the timings are of wrong work. */
  for (int i = 0; i < m; i++) {
    if (memcmp(lost[i], shards[i], len) != 0) {
      printf(",\"error\":\"reconstructed shard %d differs\"}\n", i);
      return 4;
    }
  }
  printf("}\n");
  return 0;
}
