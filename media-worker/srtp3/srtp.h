/*
 * The part of the libsrtp 3 API that mediasoup's worker uses, implemented on Debian's libsrtp2
 * (srtp3.c). Debian ships only libsrtp2 2.5; mediasoup 3.2x is written against libsrtp 3, whose
 * API differs: policies are opaque objects built with setters, protect/unprotect take separate
 * input and output buffers with size_t lengths, a stream is removed with srtp_stream_remove, and
 * the error enum gained buffer_small (28) and cryptex_err (29).
 *
 * Every name here is declared with the private prefix svc_srtp3_ and, for the worker's sources,
 * mapped to the libsrtp 3 spelling by a macro. So the layer's object file exports only svc_srtp3_*
 * symbols and can never clash with libsrtp2's own srtp_* symbols that it calls. srtp3.c defines
 * SVC_SRTP3_IMPLEMENTATION before including this file so it sees only the prefixed names next to
 * libsrtp2's real header.
 *
 * This file is installed as <srtp.h> in the worker's local libsrtp3 subproject (media-worker/build).
 */
#ifndef SVC_SRTP3_H
#define SVC_SRTP3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The same values as libsrtp2's (checked in srtp3.c): the worker sizes its buffers with it. */
#define SVC_SRTP3_MAX_TAG_LEN 16
#define SVC_SRTP3_MAX_MKI_LEN 128
#define SVC_SRTP3_MAX_TRAILER_LEN (SVC_SRTP3_MAX_TAG_LEN + SVC_SRTP3_MAX_MKI_LEN)

/* 0..27 are libsrtp2's codes with the same numbers; 28 and 29 are new in libsrtp 3. */
typedef enum {
  svc_srtp3_err_status_ok = 0,
  svc_srtp3_err_status_fail = 1,
  svc_srtp3_err_status_bad_param = 2,
  svc_srtp3_err_status_alloc_fail = 3,
  svc_srtp3_err_status_dealloc_fail = 4,
  svc_srtp3_err_status_init_fail = 5,
  svc_srtp3_err_status_terminus = 6,
  svc_srtp3_err_status_auth_fail = 7,
  svc_srtp3_err_status_cipher_fail = 8,
  svc_srtp3_err_status_replay_fail = 9,
  svc_srtp3_err_status_replay_old = 10,
  svc_srtp3_err_status_algo_fail = 11,
  svc_srtp3_err_status_no_such_op = 12,
  svc_srtp3_err_status_no_ctx = 13,
  svc_srtp3_err_status_cant_check = 14,
  svc_srtp3_err_status_key_expired = 15,
  svc_srtp3_err_status_socket_err = 16,
  svc_srtp3_err_status_signal_err = 17,
  svc_srtp3_err_status_nonce_bad = 18,
  svc_srtp3_err_status_read_fail = 19,
  svc_srtp3_err_status_write_fail = 20,
  svc_srtp3_err_status_parse_err = 21,
  svc_srtp3_err_status_encode_err = 22,
  svc_srtp3_err_status_semaphore_err = 23,
  svc_srtp3_err_status_pfkey_err = 24,
  svc_srtp3_err_status_bad_mki = 25,
  svc_srtp3_err_status_pkt_idx_old = 26,
  svc_srtp3_err_status_pkt_idx_adv = 27,
  svc_srtp3_err_status_buffer_small = 28,
  svc_srtp3_err_status_cryptex_err = 29
} svc_srtp3_err_status_t;

/* A session: really libsrtp2's srtp_ctx_t, never looked into by the worker. */
typedef struct svc_srtp3_session *svc_srtp3_t;

/* A policy under construction (srtp3.c): a libsrtp2 policy plus the key it points at. */
typedef struct svc_srtp3_policy *svc_srtp3_policy_t;

typedef enum {
  svc_srtp3_ssrc_undefined = 0,
  svc_srtp3_ssrc_specific = 1,
  svc_srtp3_ssrc_any_inbound = 2,
  svc_srtp3_ssrc_any_outbound = 3
} svc_srtp3_ssrc_type_t;

typedef struct {
  svc_srtp3_ssrc_type_t type;
  unsigned int value;
} svc_srtp3_ssrc_t;

typedef enum {
  svc_srtp3_profile_reserved = 0,
  svc_srtp3_profile_aes128_cm_sha1_80 = 1,
  svc_srtp3_profile_aes128_cm_sha1_32 = 2,
  svc_srtp3_profile_null_sha1_80 = 5,
  svc_srtp3_profile_null_sha1_32 = 6,
  svc_srtp3_profile_aead_aes_128_gcm = 7,
  svc_srtp3_profile_aead_aes_256_gcm = 8
} svc_srtp3_profile_t;

typedef enum {
  svc_srtp3_event_ssrc_collision,
  svc_srtp3_event_key_soft_limit,
  svc_srtp3_event_key_hard_limit,
  svc_srtp3_event_packet_index_limit
} svc_srtp3_event_t;

typedef struct {
  svc_srtp3_t session;
  uint32_t ssrc;
  svc_srtp3_event_t event;
} svc_srtp3_event_data_t;

typedef void(svc_srtp3_event_handler_func_t)(svc_srtp3_event_data_t *data);

svc_srtp3_err_status_t svc_srtp3_init(void);
svc_srtp3_err_status_t svc_srtp3_shutdown(void);
const char *svc_srtp3_get_version_string(void);
svc_srtp3_err_status_t svc_srtp3_install_event_handler(svc_srtp3_event_handler_func_t *func);

svc_srtp3_err_status_t svc_srtp3_policy_create(svc_srtp3_policy_t *policy);
void svc_srtp3_policy_destroy(svc_srtp3_policy_t policy);
svc_srtp3_err_status_t svc_srtp3_policy_set_ssrc(svc_srtp3_policy_t policy, svc_srtp3_ssrc_t ssrc);
svc_srtp3_err_status_t svc_srtp3_policy_set_profile(svc_srtp3_policy_t policy, svc_srtp3_profile_t profile);
svc_srtp3_err_status_t svc_srtp3_policy_add_key(svc_srtp3_policy_t policy, const uint8_t *key, size_t key_len,
                                                const uint8_t *salt, size_t salt_len, const uint8_t *mki,
                                                size_t mki_len);
svc_srtp3_err_status_t svc_srtp3_policy_set_allow_repeat_tx(svc_srtp3_policy_t policy, bool allow);
svc_srtp3_err_status_t svc_srtp3_policy_set_window_size(svc_srtp3_policy_t policy, size_t window_size);

size_t svc_srtp3_profile_get_master_key_length(svc_srtp3_profile_t profile);
size_t svc_srtp3_profile_get_master_salt_length(svc_srtp3_profile_t profile);

svc_srtp3_err_status_t svc_srtp3_create(svc_srtp3_t *session, const svc_srtp3_policy_t policy);
svc_srtp3_err_status_t svc_srtp3_dealloc(svc_srtp3_t session);
svc_srtp3_err_status_t svc_srtp3_stream_remove(svc_srtp3_t session, uint32_t ssrc);

/* *out_len is the output buffer's capacity on entry and the packet's length on return. The input
 * and output may be the same buffer. */
svc_srtp3_err_status_t svc_srtp3_protect(svc_srtp3_t session, const uint8_t *rtp, size_t rtp_len, uint8_t *srtp,
                                         size_t *srtp_len, size_t mki_index);
svc_srtp3_err_status_t svc_srtp3_unprotect(svc_srtp3_t session, const uint8_t *srtp, size_t srtp_len,
                                           uint8_t *rtp, size_t *rtp_len);
svc_srtp3_err_status_t svc_srtp3_protect_rtcp(svc_srtp3_t session, const uint8_t *rtcp, size_t rtcp_len,
                                              uint8_t *srtcp, size_t *srtcp_len, size_t mki_index);
svc_srtp3_err_status_t svc_srtp3_unprotect_rtcp(svc_srtp3_t session, const uint8_t *srtcp, size_t srtcp_len,
                                                uint8_t *rtcp, size_t *rtcp_len);

#ifndef SVC_SRTP3_IMPLEMENTATION
/* The libsrtp 3 spelling the worker's sources use. */
#define SRTP_MAX_TAG_LEN SVC_SRTP3_MAX_TAG_LEN
#define SRTP_MAX_MKI_LEN SVC_SRTP3_MAX_MKI_LEN
#define SRTP_MAX_TRAILER_LEN SVC_SRTP3_MAX_TRAILER_LEN

#define srtp_err_status_t svc_srtp3_err_status_t
#define srtp_err_status_ok svc_srtp3_err_status_ok
#define srtp_err_status_fail svc_srtp3_err_status_fail
#define srtp_err_status_bad_param svc_srtp3_err_status_bad_param
#define srtp_err_status_alloc_fail svc_srtp3_err_status_alloc_fail
#define srtp_err_status_dealloc_fail svc_srtp3_err_status_dealloc_fail
#define srtp_err_status_init_fail svc_srtp3_err_status_init_fail
#define srtp_err_status_terminus svc_srtp3_err_status_terminus
#define srtp_err_status_auth_fail svc_srtp3_err_status_auth_fail
#define srtp_err_status_cipher_fail svc_srtp3_err_status_cipher_fail
#define srtp_err_status_replay_fail svc_srtp3_err_status_replay_fail
#define srtp_err_status_replay_old svc_srtp3_err_status_replay_old
#define srtp_err_status_algo_fail svc_srtp3_err_status_algo_fail
#define srtp_err_status_no_such_op svc_srtp3_err_status_no_such_op
#define srtp_err_status_no_ctx svc_srtp3_err_status_no_ctx
#define srtp_err_status_cant_check svc_srtp3_err_status_cant_check
#define srtp_err_status_key_expired svc_srtp3_err_status_key_expired
#define srtp_err_status_socket_err svc_srtp3_err_status_socket_err
#define srtp_err_status_signal_err svc_srtp3_err_status_signal_err
#define srtp_err_status_nonce_bad svc_srtp3_err_status_nonce_bad
#define srtp_err_status_read_fail svc_srtp3_err_status_read_fail
#define srtp_err_status_write_fail svc_srtp3_err_status_write_fail
#define srtp_err_status_parse_err svc_srtp3_err_status_parse_err
#define srtp_err_status_encode_err svc_srtp3_err_status_encode_err
#define srtp_err_status_semaphore_err svc_srtp3_err_status_semaphore_err
#define srtp_err_status_pfkey_err svc_srtp3_err_status_pfkey_err
#define srtp_err_status_bad_mki svc_srtp3_err_status_bad_mki
#define srtp_err_status_pkt_idx_old svc_srtp3_err_status_pkt_idx_old
#define srtp_err_status_pkt_idx_adv svc_srtp3_err_status_pkt_idx_adv
#define srtp_err_status_buffer_small svc_srtp3_err_status_buffer_small
#define srtp_err_status_cryptex_err svc_srtp3_err_status_cryptex_err

#define srtp_t svc_srtp3_t
#define srtp_policy_t svc_srtp3_policy_t
#define srtp_ssrc_type_t svc_srtp3_ssrc_type_t
#define ssrc_undefined svc_srtp3_ssrc_undefined
#define ssrc_specific svc_srtp3_ssrc_specific
#define ssrc_any_inbound svc_srtp3_ssrc_any_inbound
#define ssrc_any_outbound svc_srtp3_ssrc_any_outbound
#define srtp_ssrc_t svc_srtp3_ssrc_t
#define srtp_profile_t svc_srtp3_profile_t
#define srtp_profile_reserved svc_srtp3_profile_reserved
#define srtp_profile_aes128_cm_sha1_80 svc_srtp3_profile_aes128_cm_sha1_80
#define srtp_profile_aes128_cm_sha1_32 svc_srtp3_profile_aes128_cm_sha1_32
#define srtp_profile_null_sha1_80 svc_srtp3_profile_null_sha1_80
#define srtp_profile_null_sha1_32 svc_srtp3_profile_null_sha1_32
#define srtp_profile_aead_aes_128_gcm svc_srtp3_profile_aead_aes_128_gcm
#define srtp_profile_aead_aes_256_gcm svc_srtp3_profile_aead_aes_256_gcm
#define srtp_event_t svc_srtp3_event_t
#define event_ssrc_collision svc_srtp3_event_ssrc_collision
#define event_key_soft_limit svc_srtp3_event_key_soft_limit
#define event_key_hard_limit svc_srtp3_event_key_hard_limit
#define event_packet_index_limit svc_srtp3_event_packet_index_limit
#define srtp_event_data_t svc_srtp3_event_data_t
#define srtp_event_handler_func_t svc_srtp3_event_handler_func_t

#define srtp_init svc_srtp3_init
#define srtp_shutdown svc_srtp3_shutdown
#define srtp_get_version_string svc_srtp3_get_version_string
#define srtp_install_event_handler svc_srtp3_install_event_handler
#define srtp_policy_create svc_srtp3_policy_create
#define srtp_policy_destroy svc_srtp3_policy_destroy
#define srtp_policy_set_ssrc svc_srtp3_policy_set_ssrc
#define srtp_policy_set_profile svc_srtp3_policy_set_profile
#define srtp_policy_add_key svc_srtp3_policy_add_key
#define srtp_policy_set_allow_repeat_tx svc_srtp3_policy_set_allow_repeat_tx
#define srtp_policy_set_window_size svc_srtp3_policy_set_window_size
#define srtp_profile_get_master_key_length svc_srtp3_profile_get_master_key_length
#define srtp_profile_get_master_salt_length svc_srtp3_profile_get_master_salt_length
#define srtp_create svc_srtp3_create
#define srtp_dealloc svc_srtp3_dealloc
#define srtp_stream_remove svc_srtp3_stream_remove
#define srtp_protect svc_srtp3_protect
#define srtp_unprotect svc_srtp3_unprotect
#define srtp_protect_rtcp svc_srtp3_protect_rtcp
#define srtp_unprotect_rtcp svc_srtp3_unprotect_rtcp
#endif

#ifdef __cplusplus
}
#endif

#endif
