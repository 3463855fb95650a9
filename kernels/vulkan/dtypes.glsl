/* gllmk dtype values (ggml's type ids), for -DWTYPE=... in the build. */
#define DT_F32 0
#define DT_F16 1
#define DT_Q4_0 2
#define DT_Q4_1 3
#define DT_Q5_0 6
#define DT_Q5_1 7
#define DT_Q8_0 8
#define DT_Q2_K 10
#define DT_Q3_K 11
#define DT_Q4_K 12
#define DT_Q5_K 13
#define DT_Q6_K 14
#define DT_Q8_K 15
#define DT_IQ4_NL 20
#define DT_IQ4_XS 23
#define DT_BF16 30
