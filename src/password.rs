//! Stored passwords: PostgreSQL's SCRAM-SHA-256 verifier,
//! `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>` (RFC 5802, RFC 7677), never
//! the password in clear. [`Verifier::from_password`] derives one (`CREATE ROLE ... PASSWORD`,
//! the password file), [`Verifier::parse`] reads one a PostgreSQL server would store,
//! [`Verifier::check_password`] checks a password sent in clear (the console's HTTP Basic
//! authentication). The wire protocol's SCRAM exchange over a verifier is
//! `server::scram`'s; the engine stores verifiers without knowing of the server.
//!
//! ```ignore
//! use tcq::password::Verifier;
//! let v = Verifier::from_password("pencil");
//! assert!(v.check_password("pencil") && !v.check_password("pen"));
//! assert_eq!(Verifier::parse(&v.to_string()), Some(v));
//! ```

use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

/// PostgreSQL's default iteration count.
pub(crate) const ITERATIONS: u32 = 4096;

/// A stored SCRAM-SHA-256 verifier.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verifier {
    pub(crate) salt: Vec<u8>,
    pub(crate) iterations: u32,
    pub(crate) stored_key: [u8; 32],
    pub(crate) server_key: [u8; 32],
}

/// `N` bytes from the kernel's random source.
pub(crate) fn random_bytes<const N: usize>() -> [u8; N] {
    let mut buf = [0u8; N];
    let mut filled = 0;
    while filled < N {
        // SAFETY: the pointer and length describe the unfilled tail of `buf`.
        let n = unsafe { libc::getrandom(buf[filled..].as_mut_ptr().cast(), N - filled, 0) };
        assert!(
            n > 0 || std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted,
            "getrandom failed: the kernel's random source must be available"
        );
        filled += n.max(0) as usize;
    }
    buf
}

/// HMAC-SHA256 of `data` under `key`.
pub(crate) fn hmac(key: &[u8], data: &[u8]) -> [u8; 32] {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC takes keys of any length");
    mac.update(data);
    mac.finalize().into_bytes().into()
}

/// PBKDF2-HMAC-SHA256 with one output block (RFC 5802's `Hi`).
pub(crate) fn salted_password(password: &str, salt: &[u8], iterations: u32) -> [u8; 32] {
    let mut block = salt.to_vec();
    block.extend_from_slice(&1u32.to_be_bytes());
    let mut u = hmac(password.as_bytes(), &block);
    let mut out = u;
    for _ in 1..iterations {
        u = hmac(password.as_bytes(), &u);
        out.iter_mut().zip(u).for_each(|(o, x)| *o ^= x);
    }
    out
}

impl Verifier {
    /// A verifier for `password` with a fresh random salt.
    pub fn from_password(password: &str) -> Verifier {
        let salt = random_bytes::<16>().to_vec();
        let salted = salted_password(password, &salt, ITERATIONS);
        let client_key = hmac(&salted, b"Client Key");
        Verifier {
            salt,
            iterations: ITERATIONS,
            stored_key: Sha256::digest(client_key).into(),
            server_key: hmac(&salted, b"Server Key"),
        }
    }

    /// Read PostgreSQL's stored form, `SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>`.
    pub(crate) fn parse(text: &str) -> Option<Verifier> {
        let rest = text.strip_prefix("SCRAM-SHA-256$")?;
        let (params, keys) = rest.split_once('$')?;
        let (iterations, salt) = params.split_once(':')?;
        let (stored, server) = keys.split_once(':')?;
        Some(Verifier {
            iterations: iterations.parse().ok().filter(|&i| i > 0)?,
            salt: B64.decode(salt).ok()?,
            stored_key: B64.decode(stored).ok()?.try_into().ok()?,
            server_key: B64.decode(server).ok()?.try_into().ok()?,
        })
    }

    /// Whether `password` is the one this verifier was derived from (for HTTP Basic
    /// authentication, where the client sends the password itself). The derived StoredKey
    /// is compared in constant time.
    pub(crate) fn check_password(&self, password: &str) -> bool {
        use subtle::ConstantTimeEq;
        let salted = salted_password(password, &self.salt, self.iterations);
        let stored: [u8; 32] = Sha256::digest(hmac(&salted, b"Client Key")).into();
        stored.ct_eq(&self.stored_key).into()
    }

    /// A verifier nobody knows the password of (for unknown users).
    pub(crate) fn random() -> Verifier {
        Verifier {
            salt: random_bytes::<16>().to_vec(),
            iterations: ITERATIONS,
            stored_key: random_bytes(),
            server_key: random_bytes(),
        }
    }
}

impl std::fmt::Display for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SCRAM-SHA-256${}:{}${}:{}",
            self.iterations,
            B64.encode(&self.salt),
            B64.encode(self.stored_key),
            B64.encode(self.server_key)
        )
    }
}

#[cfg(test)]
mod doc_examples {
    //! The examples in this module's documentation, run as unit tests: they use items
    //! private to the crate, which doctests cannot reach.

    #[test]
    fn module_example() {
        use crate::password::Verifier;
        let v = Verifier::from_password("pencil");
        assert!(v.check_password("pencil") && !v.check_password("pen"));
        assert_eq!(Verifier::parse(&v.to_string()), Some(v));
    }
}
