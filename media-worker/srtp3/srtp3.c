/*
 * libsrtp 3 API (srtp.h next to this file) on top of Debian's libsrtp2 2.5. See srtp.h for why.
 *
 * libsrtp2 works in place on one buffer with an int length and assumes it may write the
 * authentication tag (and, for SRTCP, the 4-byte index) past the packet; libsrtp 3 takes an input
 * buffer, an output buffer and the output's capacity. So each call copies the packet into the
 * output buffer when they differ, checks the capacity first (buffer_small instead of an overrun),
 * and runs libsrtp2 in place there.
 */
#define SVC_SRTP3_IMPLEMENTATION
#include "srtp.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <srtp2/srtp.h>

_Static_assert(SVC_SRTP3_MAX_TAG_LEN == SRTP_MAX_TAG_LEN, "tag length differs from libsrtp2's");
_Static_assert(SVC_SRTP3_MAX_MKI_LEN == SRTP_MAX_MKI_LEN, "MKI length differs from libsrtp2's");
_Static_assert(svc_srtp3_err_status_pkt_idx_adv == (int)srtp_err_status_pkt_idx_adv,
               "libsrtp2's error codes are no longer a prefix of libsrtp 3's");

/* SRTCP appends a 4-byte index (with the E flag) before the tag. */
#define SRTCP_INDEX_LEN 4
/* Longest master key plus salt of any profile (AES-256-GCM: 32 + 12; AES-CM: 16 + 14). */
#define MASTER_KEY_SALT_LEN_MAX 64

struct svc_srtp3_policy {
  srtp_policy_t v2;
  srtp_profile_t profile;
  int has_profile;
  int has_key;
  unsigned char key_and_salt[MASTER_KEY_SALT_LEN_MAX];
};

static svc_srtp3_err_status_t from_v2(srtp_err_status_t status) {
  return (svc_srtp3_err_status_t)status;
}

static int to_v2_profile(svc_srtp3_profile_t profile, srtp_profile_t *out) {
  switch (profile) {
    case svc_srtp3_profile_aes128_cm_sha1_80: *out = srtp_profile_aes128_cm_sha1_80; return 1;
    case svc_srtp3_profile_aes128_cm_sha1_32: *out = srtp_profile_aes128_cm_sha1_32; return 1;
    case svc_srtp3_profile_null_sha1_80: *out = srtp_profile_null_sha1_80; return 1;
    case svc_srtp3_profile_null_sha1_32: *out = srtp_profile_null_sha1_32; return 1;
    case svc_srtp3_profile_aead_aes_128_gcm: *out = srtp_profile_aead_aes_128_gcm; return 1;
    case svc_srtp3_profile_aead_aes_256_gcm: *out = srtp_profile_aead_aes_256_gcm; return 1;
    default: return 0;
  }
}

svc_srtp3_err_status_t svc_srtp3_init(void) { return from_v2(srtp_init()); }

svc_srtp3_err_status_t svc_srtp3_shutdown(void) { return from_v2(srtp_shutdown()); }

const char *svc_srtp3_get_version_string(void) { return srtp_get_version_string(); }

/* libsrtp2 calls its own handler type; this trampoline translates the event for the worker's. */
static svc_srtp3_event_handler_func_t *user_event_handler;

static void forward_event(srtp_event_data_t *data) {
  if (user_event_handler == NULL) return;
  svc_srtp3_event_data_t event;
  event.session = (svc_srtp3_t)data->session;
  event.ssrc = data->ssrc;
  switch (data->event) {
    case event_ssrc_collision: event.event = svc_srtp3_event_ssrc_collision; break;
    case event_key_soft_limit: event.event = svc_srtp3_event_key_soft_limit; break;
    case event_key_hard_limit: event.event = svc_srtp3_event_key_hard_limit; break;
    case event_packet_index_limit: event.event = svc_srtp3_event_packet_index_limit; break;
    default: return;
  }
  user_event_handler(&event);
}

svc_srtp3_err_status_t svc_srtp3_install_event_handler(svc_srtp3_event_handler_func_t *func) {
  user_event_handler = func;
  return from_v2(srtp_install_event_handler(func == NULL ? NULL : forward_event));
}

svc_srtp3_err_status_t svc_srtp3_policy_create(svc_srtp3_policy_t *policy) {
  if (policy == NULL) return svc_srtp3_err_status_bad_param;
  struct svc_srtp3_policy *p = calloc(1, sizeof *p);
  if (p == NULL) return svc_srtp3_err_status_alloc_fail;
  /* libsrtp 3's defaults: no repeated sequence numbers, the library's default replay window. */
  p->v2.window_size = 0;
  p->v2.allow_repeat_tx = 0;
  p->v2.next = NULL;
  *policy = p;
  return svc_srtp3_err_status_ok;
}

void svc_srtp3_policy_destroy(svc_srtp3_policy_t policy) {
  if (policy == NULL) return;
  /* The key material must not linger in freed memory. */
  memset(policy, 0, sizeof *policy);
  free(policy);
}

svc_srtp3_err_status_t svc_srtp3_policy_set_ssrc(svc_srtp3_policy_t policy, svc_srtp3_ssrc_t ssrc) {
  if (policy == NULL) return svc_srtp3_err_status_bad_param;
  switch (ssrc.type) {
    case svc_srtp3_ssrc_specific: policy->v2.ssrc.type = ssrc_specific; break;
    case svc_srtp3_ssrc_any_inbound: policy->v2.ssrc.type = ssrc_any_inbound; break;
    case svc_srtp3_ssrc_any_outbound: policy->v2.ssrc.type = ssrc_any_outbound; break;
    default: return svc_srtp3_err_status_bad_param;
  }
  policy->v2.ssrc.value = ssrc.value;
  return svc_srtp3_err_status_ok;
}

svc_srtp3_err_status_t svc_srtp3_policy_set_profile(svc_srtp3_policy_t policy, svc_srtp3_profile_t profile) {
  srtp_profile_t v2_profile;
  if (policy == NULL || !to_v2_profile(profile, &v2_profile)) return svc_srtp3_err_status_bad_param;
  srtp_err_status_t status = srtp_crypto_policy_set_from_profile_for_rtp(&policy->v2.rtp, v2_profile);
  if (status != srtp_err_status_ok) return from_v2(status);
  status = srtp_crypto_policy_set_from_profile_for_rtcp(&policy->v2.rtcp, v2_profile);
  if (status != srtp_err_status_ok) return from_v2(status);
  policy->profile = v2_profile;
  policy->has_profile = 1;
  return svc_srtp3_err_status_ok;
}

size_t svc_srtp3_profile_get_master_key_length(svc_srtp3_profile_t profile) {
  srtp_profile_t v2_profile;
  return to_v2_profile(profile, &v2_profile) ? srtp_profile_get_master_key_length(v2_profile) : 0;
}

size_t svc_srtp3_profile_get_master_salt_length(svc_srtp3_profile_t profile) {
  srtp_profile_t v2_profile;
  return to_v2_profile(profile, &v2_profile) ? srtp_profile_get_master_salt_length(v2_profile) : 0;
}

/* libsrtp2 wants the master key and salt in one buffer, key first. Only one key and no MKI: the
 * worker never uses more. */
svc_srtp3_err_status_t svc_srtp3_policy_add_key(svc_srtp3_policy_t policy, const uint8_t *key, size_t key_len,
                                                const uint8_t *salt, size_t salt_len, const uint8_t *mki,
                                                size_t mki_len) {
  if (policy == NULL || key == NULL || salt == NULL || !policy->has_profile || policy->has_key)
    return svc_srtp3_err_status_bad_param;
  if (mki != NULL || mki_len != 0) return svc_srtp3_err_status_bad_param;
  if (key_len != srtp_profile_get_master_key_length(policy->profile) ||
      salt_len != srtp_profile_get_master_salt_length(policy->profile) ||
      key_len + salt_len > sizeof policy->key_and_salt)
    return svc_srtp3_err_status_bad_param;
  memcpy(policy->key_and_salt, key, key_len);
  memcpy(policy->key_and_salt + key_len, salt, salt_len);
  policy->v2.key = policy->key_and_salt;
  policy->has_key = 1;
  return svc_srtp3_err_status_ok;
}

svc_srtp3_err_status_t svc_srtp3_policy_set_allow_repeat_tx(svc_srtp3_policy_t policy, bool allow) {
  if (policy == NULL) return svc_srtp3_err_status_bad_param;
  policy->v2.allow_repeat_tx = allow ? 1 : 0;
  return svc_srtp3_err_status_ok;
}

svc_srtp3_err_status_t svc_srtp3_policy_set_window_size(svc_srtp3_policy_t policy, size_t window_size) {
  /* libsrtp2 accepts 64 .. 2^15 - 1 (checked again by srtp_create). */
  if (policy == NULL || window_size < 64 || window_size >= 0x8000) return svc_srtp3_err_status_bad_param;
  policy->v2.window_size = (unsigned long)window_size;
  return svc_srtp3_err_status_ok;
}

svc_srtp3_err_status_t svc_srtp3_create(svc_srtp3_t *session, const svc_srtp3_policy_t policy) {
  if (session == NULL || policy == NULL || !policy->has_profile || !policy->has_key)
    return svc_srtp3_err_status_bad_param;
  srtp_t ctx = NULL;
  /* libsrtp2 copies the key into the session, so the policy may be destroyed afterwards. */
  srtp_err_status_t status = srtp_create(&ctx, &policy->v2);
  if (status != srtp_err_status_ok) return from_v2(status);
  *session = (svc_srtp3_t)ctx;
  return svc_srtp3_err_status_ok;
}

svc_srtp3_err_status_t svc_srtp3_dealloc(svc_srtp3_t session) { return from_v2(srtp_dealloc((srtp_t)session)); }

svc_srtp3_err_status_t svc_srtp3_stream_remove(svc_srtp3_t session, uint32_t ssrc) {
  return from_v2(srtp_remove_stream((srtp_t)session, ssrc));
}

/* Copies the packet into the output buffer (if it is another one) after checking that it fits
 * with `extra` bytes to spare, which libsrtp2 may write past the packet. */
static svc_srtp3_err_status_t stage(const uint8_t *in, size_t in_len, uint8_t *out, size_t out_capacity,
                                    size_t extra, int *v2_len) {
  if (in == NULL || out == NULL) return svc_srtp3_err_status_bad_param;
  if (in_len > (size_t)INT_MAX - extra) return svc_srtp3_err_status_bad_param;
  if (out_capacity < in_len + extra) return svc_srtp3_err_status_buffer_small;
  if (out != in) memmove(out, in, in_len);
  *v2_len = (int)in_len;
  return svc_srtp3_err_status_ok;
}

/* libsrtp2's four packet transforms share one shape: a packet transformed in place, its length
 * passed in and out through an int. */
typedef srtp_err_status_t (*v2_transform_t)(srtp_t ctx, void *packet, int *len);

/* One libsrtp 3 call: the packet staged into `out` with `extra` bytes to spare, transformed there
 * by libsrtp2, and its new length reported through `out_len`. */
static svc_srtp3_err_status_t transform(v2_transform_t v2, svc_srtp3_t session, const uint8_t *in, size_t in_len,
                                        uint8_t *out, size_t *out_len, size_t extra) {
  if (out_len == NULL) return svc_srtp3_err_status_bad_param;
  int len;
  svc_srtp3_err_status_t staged = stage(in, in_len, out, *out_len, extra, &len);
  if (staged != svc_srtp3_err_status_ok) return staged;
  srtp_err_status_t status = v2((srtp_t)session, out, &len);
  if (status != srtp_err_status_ok) return from_v2(status);
  *out_len = (size_t)len;
  return svc_srtp3_err_status_ok;
}

svc_srtp3_err_status_t svc_srtp3_protect(svc_srtp3_t session, const uint8_t *rtp, size_t rtp_len, uint8_t *srtp,
                                         size_t *srtp_len, size_t mki_index) {
  if (mki_index != 0) return svc_srtp3_err_status_bad_param;
  return transform(srtp_protect, session, rtp, rtp_len, srtp, srtp_len, SRTP_MAX_TRAILER_LEN);
}

svc_srtp3_err_status_t svc_srtp3_unprotect(svc_srtp3_t session, const uint8_t *srtp, size_t srtp_len,
                                           uint8_t *rtp, size_t *rtp_len) {
  return transform(srtp_unprotect, session, srtp, srtp_len, rtp, rtp_len, 0);
}

svc_srtp3_err_status_t svc_srtp3_protect_rtcp(svc_srtp3_t session, const uint8_t *rtcp, size_t rtcp_len,
                                              uint8_t *srtcp, size_t *srtcp_len, size_t mki_index) {
  if (mki_index != 0) return svc_srtp3_err_status_bad_param;
  return transform(srtp_protect_rtcp, session, rtcp, rtcp_len, srtcp, srtcp_len, SRTP_MAX_TRAILER_LEN + SRTCP_INDEX_LEN);
}

svc_srtp3_err_status_t svc_srtp3_unprotect_rtcp(svc_srtp3_t session, const uint8_t *srtcp, size_t srtcp_len,
                                                uint8_t *rtcp, size_t *rtcp_len) {
  return transform(srtp_unprotect_rtcp, session, srtcp, srtcp_len, rtcp, rtcp_len, 0);
}
