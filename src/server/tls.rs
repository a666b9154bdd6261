//! TLS for client connections: the certificate and key files, and the acceptor a
//! connection is wrapped with after it asked for TLS (SSLRequest answered `S`).
//!
//! rustls with the `ring` provider; TLS 1.2 and 1.3, no client certificates. The ALPN
//! protocol `postgresql` (what PostgreSQL 17 servers announce) is offered, so clients that
//! ask for it get it and those that do not are unaffected.

use std::path::Path;
use std::sync::Arc;

use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

/// A loaded certificate chain and private key, ready to accept TLS connections.
#[derive(Clone)]
pub struct Tls {
    pub(crate) acceptor: TlsAcceptor,
    /// The `tls-server-end-point` channel binding data of the server certificate, for
    /// SCRAM-SHA-256-PLUS (`None`: its signature algorithm names no single hash, and
    /// only SCRAM-SHA-256 is offered).
    pub(crate) end_point: Option<Vec<u8>>,
}

impl std::fmt::Debug for Tls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tls { .. }")
    }
}

/// Refuse a private key file that group or others may access, as PostgreSQL refuses one:
/// owned by the user running tcqd, its mode must be 0600 or less; owned by root, 0640 or
/// less (a key shared through a group, e.g. Debian's ssl-cert); owned by anyone else, it
/// is refused. Errors: `PermissionDenied` naming the file, its mode and the fix.
pub(crate) fn check_key_file(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(path)
        .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    let mode = meta.mode() & 0o7777;
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    let refuse = |why: String| {
        Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!("{}: {why}", path.display()),
        ))
    };
    if meta.uid() != me && meta.uid() != 0 {
        return refuse(format!(
            "private key file must be owned by the user running tcqd or by root (it is owned by uid {})",
            meta.uid()
        ));
    }
    let allowed = if meta.uid() == 0 && me != 0 {
        0o640
    } else {
        0o600
    };
    if mode & !allowed & 0o777 != 0 {
        return refuse(format!(
            "private key file has group or world access (mode {mode:04o}); it must be u=rw (0600) or less if owned by the user running tcqd, or u=rw,g=r (0640) or less if owned by root: chmod 0600 {}",
            path.display()
        ));
    }
    Ok(())
}

impl Tls {
    /// Load a PEM certificate chain (the server's certificate first, then any
    /// intermediates) from `cert` and a PEM private key (PKCS#8, PKCS#1 or SEC1) from `key`.
    ///
    /// Errors (`InvalidData`, `PermissionDenied` or the file's own I/O error), each naming
    /// the file: a file cannot be read, holds no certificate or no private key, the key
    /// does not match the certificate, or the key file is readable by others (see
    /// [`check_key_file`]).
    pub(crate) fn from_pem_files(cert: &Path, key: &Path) -> std::io::Result<Tls> {
        let bad = |path: &Path, what: String| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: {what}", path.display()),
            )
        };
        let read = |path: &Path| {
            std::fs::read(path)
                .map_err(|e| std::io::Error::new(e.kind(), format!("{}: {e}", path.display())))
        };
        let cert_pem = read(cert)?;
        let chain = CertificateDer::pem_slice_iter(&cert_pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad(cert, format!("not a PEM certificate file: {e}")))?;
        if chain.is_empty() {
            return Err(bad(
                cert,
                "no PEM certificate (BEGIN CERTIFICATE) in the file".into(),
            ));
        }
        let end_point = super::end_point::certificate_hash(&chain[0]);
        check_key_file(key)?;
        let key_pem = read(key)?;
        let private = PrivateKeyDer::from_pem_slice(&key_pem)
            .map_err(|e| bad(key, format!("no usable PEM private key: {e}")))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| bad(cert, e.to_string()))?
            .with_no_client_auth()
            .with_single_cert(chain, private)
            .map_err(|e| {
                bad(
                    key,
                    format!("does not fit the certificate in {}: {e}", cert.display()),
                )
            })?;
        config.alpn_protocols = vec![b"postgresql".to_vec()];
        Ok(Tls {
            acceptor: TlsAcceptor::from(Arc::new(config)),
            end_point,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::tls_required;

    #[test]
    fn tls_is_required_beyond_loopback_only_with_tls_and_passwords() {
        let far = "192.0.2.7".parse().unwrap();
        let near = "127.0.0.1".parse().unwrap();
        let near6 = "::1".parse().unwrap();
        let mapped = "::ffff:127.0.0.2".parse().unwrap();
        let far_mapped = "::ffff:192.0.2.7".parse().unwrap();
        assert!(tls_required(true, true, far, false));
        assert!(tls_required(true, true, far_mapped, false));
        assert!(!tls_required(true, true, far, true));
        assert!(!tls_required(true, true, near, false));
        assert!(!tls_required(true, true, near6, false));
        assert!(!tls_required(true, true, mapped, false));
        assert!(!tls_required(false, true, far, false));
        assert!(!tls_required(true, false, far, false));
    }
}
