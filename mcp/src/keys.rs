//! The agent's key: from `PRIVATE_KEY`, or an encrypted JSON keystore and its password. Nothing
//! here ever formats the key or the password into a message: errors say what was wrong with them,
//! never what they were.

use std::path::Path;

use alloy::signers::local::PrivateKeySigner;

/// Why no key could be loaded.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    /// Neither source was given.
    #[error("no key: set PRIVATE_KEY, or pass --keystore PATH with the password in KEYSTORE_PASSWORD")]
    Missing,
    /// Both sources were given.
    #[error("both PRIVATE_KEY and --keystore are set: keep one")]
    Both,
    /// The private key is not 32 bytes of hex.
    #[error("PRIVATE_KEY is not a private key: expected 64 hex digits (0x optional)")]
    BadPrivateKey,
    /// The keystore could not be opened or decrypted.
    #[error("could not decrypt the keystore {path}: {why} (check the path and KEYSTORE_PASSWORD)")]
    Keystore {
        /// The keystore file.
        path: String,
        /// What went wrong, without secrets.
        why: &'static str,
    },
}

/// Where the key comes from. `Debug` shows which source, never its content.
pub enum KeySource<'a> {
    /// A hex private key.
    PrivateKey(&'a str),
    /// A keystore file and its password.
    Keystore {
        /// The file.
        path: &'a Path,
        /// Its password.
        password: &'a str,
    },
}

impl std::fmt::Debug for KeySource<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::PrivateKey(_) => f.write_str("PrivateKey(<redacted>)"),
            Self::Keystore { path, .. } => write!(f, "Keystore({}, <redacted>)", path.display()),
        }
    }
}

impl<'a> KeySource<'a> {
    /// The one source given, or why there is none.
    pub fn pick(
        private_key: Option<&'a str>,
        keystore: Option<&'a Path>,
        password: Option<&'a str>,
    ) -> Result<Self, KeyError> {
        match (private_key.filter(|k| !k.trim().is_empty()), keystore) {
            (Some(_), Some(_)) => Err(KeyError::Both),
            (Some(key), None) => Ok(Self::PrivateKey(key)),
            (None, Some(path)) => Ok(Self::Keystore { path, password: password.unwrap_or_default() }),
            (None, None) => Err(KeyError::Missing),
        }
    }

    /// The signer.
    pub fn load(&self) -> Result<PrivateKeySigner, KeyError> {
        match self {
            Self::PrivateKey(key) => key.trim().parse().map_err(|_| KeyError::BadPrivateKey),
            Self::Keystore { path, password } => {
                PrivateKeySigner::decrypt_keystore(path, password).map_err(|e| KeyError::Keystore {
                    path: path.display().to_string(),
                    why: keystore_reason(&e),
                })
            }
        }
    }
}

/// A fixed description of a keystore failure: the library's own message could quote input.
fn keystore_reason(e: &alloy::signers::local::LocalSignerError) -> &'static str {
    let text = e.to_string();
    if text.contains("Mac Mismatch") {
        "wrong password"
    } else if text.contains("No such file") || text.contains("os error") {
        "the file cannot be read"
    } else {
        "the file is not a valid JSON keystore"
    }
}
