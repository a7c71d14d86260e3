/* The certificate and key check before a TLS daemon starts: one verdict per flag, where MHD would only fail to
   start (and log GnuTLS's reason). The same GnuTLS calls as MHD_TLS_init in libmicrohttpd 0.9.75. */
#include "include/CMicroHTTPDShim.h"

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <string.h>

/* TLS 1.3 as GnuTLS offers it, and TLS 1.2 with ECDHE key exchange and AEAD ciphers only, no SHA-1 signatures
   (CONTRACT §8.9): `gnutls-cli --priority '…' -l` lists 3 TLS 1.3 and 6 TLS 1.2 suites. */
const char *const unicache_mhd_tls_priorities =
    "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:-CIPHER-ALL:+AES-256-GCM:"
    "+AES-128-GCM:+CHACHA20-POLY1305:-MAC-ALL:+AEAD:-SIGN-RSA-SHA1:-SIGN-ECDSA-SHA1:-SIGN-DSA-SHA1";

static int verdict(int code, int gnutls_error, char *reason, size_t reason_size) {
    if (reason_size > 0) snprintf(reason, reason_size, "%s", gnutls_strerror(gnutls_error));
    return code;
}

static gnutls_datum_t datum(const char *text) {
    gnutls_datum_t value = {.data = (unsigned char *)text, .size = (unsigned int)strlen(text)};
    return value;
}

static int check_certificates(const char *certificate_pem, char *reason, size_t reason_size) {
    gnutls_datum_t text = datum(certificate_pem);
    gnutls_x509_crt_t *list = NULL;
    unsigned int count = 0;
    int result = gnutls_x509_crt_list_import2(&list, &count, &text, GNUTLS_X509_FMT_PEM, 0);
    if (result < 0) return verdict(UNICACHE_MHD_TLS_BAD_CERTIFICATE, result, reason, reason_size);
    for (unsigned int index = 0; index < count; index++) gnutls_x509_crt_deinit(list[index]);
    gnutls_free(list);
    if (count == 0) return verdict(UNICACHE_MHD_TLS_BAD_CERTIFICATE, GNUTLS_E_NO_CERTIFICATE_FOUND, reason, reason_size);
    return UNICACHE_MHD_TLS_OK;
}

static int check_key(const char *key_pem, char *reason, size_t reason_size) {
    gnutls_datum_t text = datum(key_pem);
    gnutls_x509_privkey_t key;
    int result = gnutls_x509_privkey_init(&key);
    if (result < 0) return verdict(UNICACHE_MHD_TLS_BAD_KEY, result, reason, reason_size);
    result = gnutls_x509_privkey_import2(key, &text, GNUTLS_X509_FMT_PEM, NULL, 0);
    gnutls_x509_privkey_deinit(key);
    if (result < 0) return verdict(UNICACHE_MHD_TLS_BAD_KEY, result, reason, reason_size);
    return UNICACHE_MHD_TLS_OK;
}

int unicache_mhd_tls_check(const char *certificate_pem, const char *key_pem, char *reason, size_t reason_size) {
    if (reason_size > 0) reason[0] = '\0';
    if (MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) return UNICACHE_MHD_TLS_UNSUPPORTED;
    int checked = check_certificates(certificate_pem, reason, reason_size);
    if (checked == UNICACHE_MHD_TLS_OK) checked = check_key(key_pem, reason, reason_size);
    if (checked != UNICACHE_MHD_TLS_OK) return checked;
    /* As MHD loads them: the chain and the key together, which GnuTLS refuses when the key is not the leaf's. */
    gnutls_certificate_credentials_t credentials;
    int result = gnutls_certificate_allocate_credentials(&credentials);
    if (result < 0) return verdict(UNICACHE_MHD_TLS_MISMATCH, result, reason, reason_size);
    gnutls_datum_t certificate = datum(certificate_pem);
    gnutls_datum_t key = datum(key_pem);
    result = gnutls_certificate_set_x509_key_mem2(credentials, &certificate, &key, GNUTLS_X509_FMT_PEM, NULL, 0);
    gnutls_certificate_free_credentials(credentials);
    if (result < 0) return verdict(UNICACHE_MHD_TLS_MISMATCH, result, reason, reason_size);
    gnutls_priority_t priorities;
    result = gnutls_priority_init(&priorities, unicache_mhd_tls_priorities, NULL);
    if (result < 0) return verdict(UNICACHE_MHD_TLS_UNSUPPORTED, result, reason, reason_size);
    gnutls_priority_deinit(priorities);
    return UNICACHE_MHD_TLS_OK;
}
