#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/pem.h>
#include <openssl/rand.h>

// OpenSSL exposes these as macros (or variadic helpers), which Swift cannot import.
// Each shim is a one-line wrapper so the Swift side never needs to know the macro's expansion.

static inline long gs_BIO_get_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

static inline int gs_SSL_CTX_set_tls13_only(SSL_CTX *ctx) {
    return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION)
        && (int)SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
}

// Device certificates are Ed25519 and every GroupSync peer speaks X25519, so the handshake offers only
// those: the ClientHello and the CertificateRequest stop listing two dozen algorithms no peer will use,
// which saves about 75 bytes per connection and leaves nothing else to negotiate.
static inline int gs_SSL_CTX_offer_only_ed25519_and_x25519(SSL_CTX *ctx) {
    return (int)SSL_CTX_set1_sigalgs_list(ctx, "ed25519")
        && (int)SSL_CTX_set1_groups_list(ctx, "X25519");
}

// Session resumption would let a peer skip certificate verification on a later handshake,
// so a peer removed from the allow-list could come back. Turn every form of it off.
static inline void gs_SSL_CTX_disable_resumption(SSL_CTX *ctx) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    SSL_CTX_set_num_tickets(ctx, 0);
}

// Partial writes plus a moving buffer let a non-blocking SSL_write be retried from Swift
// arrays whose storage address may change between attempts.
static inline void gs_SSL_set_retry_friendly_modes(SSL *ssl) {
    SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
}

static inline int gs_SSL_get_ex_new_index(void) {
    return SSL_get_ex_new_index(0, NULL, NULL, NULL, NULL);
}

// Adds an X.509 v3 extension given in openssl.cnf text form ("critical,CA:FALSE").
// The X509V3_CTX struct and its set-up macro stay on the C side.
static inline int gs_X509_add_extension_text(X509 *cert, int nid, const char *value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, cert, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (ext == NULL) return 0;
    int ok = X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    return ok;
}
