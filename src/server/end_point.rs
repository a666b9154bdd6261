//! The `tls-server-end-point` channel binding data of RFC 5929 section 4.1, which
//! SCRAM-SHA-256-PLUS binds an authentication to: the hash of the server's certificate (the
//! DER bytes), with the hash function of the certificate's signature algorithm, except that
//! MD5 and SHA-1 are replaced by SHA-256. PostgreSQL computes the same
//! (`be_tls_get_certificate_hash`), and libpq, pgjdbc and the other drivers expect it.
//!
//! Only the signature algorithm is read from the DER: the outer SEQUENCE, the
//! `tbsCertificate` skipped by its length, then the `signatureAlgorithm`'s OID.

use sha2::{Digest, Sha224, Sha256, Sha384, Sha512};

/// RSA PKCS#1 (`1.2.840.113549.1.1.x`) and ECDSA (`1.2.840.10045.4.x`) OID prefixes.
const RSA_PKCS1: &[u8] = &[0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01];
const ECDSA: &[u8] = &[0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x04];

/// A hash function the binding may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Hash {
    Sha224,
    Sha256,
    Sha384,
    Sha512,
}

/// The channel binding data for the server certificate `der`; `None` when its signature
/// algorithm names no single hash function (Ed25519, RSA-PSS) or the DER cannot be read:
/// the server then offers no SCRAM-SHA-256-PLUS, as PostgreSQL does not.
pub(crate) fn certificate_hash(der: &[u8]) -> Option<Vec<u8>> {
    let hash = signature_hash(der)?;
    Some(match hash {
        Hash::Sha224 => Sha224::digest(der).to_vec(),
        Hash::Sha256 => Sha256::digest(der).to_vec(),
        Hash::Sha384 => Sha384::digest(der).to_vec(),
        Hash::Sha512 => Sha512::digest(der).to_vec(),
    })
}

/// The hash of the certificate's signature algorithm (MD5 and SHA-1 as SHA-256).
fn signature_hash(der: &[u8]) -> Option<Hash> {
    let (tag, certificate, _) = element(der)?;
    if tag != 0x30 {
        return None;
    }
    let (_, _, after_tbs) = element(certificate)?;
    let (tag, algorithm, _) = element(after_tbs)?;
    if tag != 0x30 {
        return None;
    }
    let (tag, oid, _) = element(algorithm)?;
    if tag != 0x06 {
        return None;
    }
    if let Some(&[n]) = oid.strip_prefix(RSA_PKCS1) {
        return match n {
            0x04 | 0x05 | 0x0B => Some(Hash::Sha256), // MD5, SHA-1, SHA-256
            0x0C => Some(Hash::Sha384),
            0x0D => Some(Hash::Sha512),
            0x0E => Some(Hash::Sha224),
            _ => None,
        };
    }
    match oid.strip_prefix(ECDSA)? {
        [0x01] => Some(Hash::Sha256), // ecdsa-with-SHA1
        [0x03, 0x01] => Some(Hash::Sha224),
        [0x03, 0x02] => Some(Hash::Sha256),
        [0x03, 0x03] => Some(Hash::Sha384),
        [0x03, 0x04] => Some(Hash::Sha512),
        _ => None,
    }
}

/// The first DER element of `b`: its tag, its contents and what follows it.
fn element(b: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = b.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (first as usize, rest)
    } else {
        let n = (first & 0x7F) as usize;
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n].iter().fold(0usize, |l, &b| (l << 8) | b as usize);
        (len, &rest[n..])
    };
    (rest.len() >= len).then(|| (tag, &rest[..len], &rest[len..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_follows_the_signature_algorithm() {
        // rcgen signs with ECDSA P-256 and SHA-256 by default.
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let der = cert.der().to_vec();
        assert_eq!(signature_hash(&der), Some(Hash::Sha256));
        assert_eq!(certificate_hash(&der), Some(Sha256::digest(&der).to_vec()));
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P384_SHA384).unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        assert_eq!(signature_hash(cert.der()), Some(Hash::Sha384));
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        assert_eq!(certificate_hash(cert.der()), None);
        assert_eq!(certificate_hash(b"\x30\x05junk"), None);
    }
}
