//! A TLS terminator in front of a plain endpoint (anvil), the way an operator puts a node behind
//! HTTPS, with certificates made here: a test certificate authority (trusted by a process through
//! `SSL_CERT_FILE`) and a server certificate that is good, expired, or for another host.

use std::path::{Path, PathBuf};

use openssl::{
    asn1::Asn1Time,
    bn::{BigNum, MsbOption},
    ec::{EcGroup, EcKey},
    hash::MessageDigest,
    nid::Nid,
    pkey::{PKey, Private},
    x509::{
        X509, X509Builder, X509NameBuilder, X509NameRef,
        extension::{BasicConstraints, KeyUsage, SubjectAlternativeName},
    },
};
use tokio::net::{TcpListener, TcpStream};

use crate::HarnessError;

fn tls(e: impl std::fmt::Display) -> HarnessError {
    HarnessError::Process(format!("test TLS: {e}"))
}

/// A certificate authority for one test, its certificate written to a PEM file.
pub struct TestCa {
    key: PKey<Private>,
    cert: X509,
    file: PathBuf,
}

/// Which server certificate the terminator shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerCert {
    /// For `localhost`, valid now, signed by the test CA.
    Good,
    /// For `localhost`, but valid only in January 2020.
    Expired,
    /// Valid now, but for `other.example`, not `localhost`.
    OtherHost,
}

fn new_key() -> Result<PKey<Private>, HarnessError> {
    let group = EcGroup::from_curve_name(Nid::X9_62_PRIME256V1).map_err(tls)?;
    PKey::from_ec_key(EcKey::generate(&group).map_err(tls)?).map_err(tls)
}

/// A certificate builder with a random serial, `subject` as its common name, issued by `issuer`
/// (itself when `None`), valid `from..until`.
fn builder(
    key: &PKey<Private>,
    subject: &str,
    issuer: Option<&X509NameRef>,
    from: &Asn1Time,
    until: &Asn1Time,
) -> Result<X509Builder, HarnessError> {
    let mut name = X509NameBuilder::new().map_err(tls)?;
    name.append_entry_by_nid(Nid::COMMONNAME, subject).map_err(tls)?;
    let name = name.build();
    let mut serial = BigNum::new().map_err(tls)?;
    serial.rand(64, MsbOption::MAYBE_ZERO, false).map_err(tls)?;
    let mut b = X509Builder::new().map_err(tls)?;
    b.set_version(2).map_err(tls)?;
    let serial = serial.to_asn1_integer().map_err(tls)?;
    b.set_serial_number(&serial).map_err(tls)?;
    b.set_subject_name(&name).map_err(tls)?;
    b.set_issuer_name(issuer.unwrap_or(&name)).map_err(tls)?;
    b.set_pubkey(key).map_err(tls)?;
    b.set_not_before(from).map_err(tls)?;
    b.set_not_after(until).map_err(tls)?;
    Ok(b)
}

impl TestCa {
    /// A new CA, valid for a day, its certificate written to a file in `dir`.
    pub fn new(dir: &Path) -> Result<Self, HarnessError> {
        let key = new_key()?;
        let (from, until) =
            (Asn1Time::days_from_now(0).map_err(tls)?, Asn1Time::days_from_now(1).map_err(tls)?);
        let mut b = builder(&key, "AgentPact test CA", None, &from, &until)?;
        b.append_extension(BasicConstraints::new().critical().ca().build().map_err(tls)?).map_err(tls)?;
        b.append_extension(KeyUsage::new().critical().key_cert_sign().crl_sign().build().map_err(tls)?)
            .map_err(tls)?;
        b.sign(&key, MessageDigest::sha256()).map_err(tls)?;
        let cert = b.build();
        let file = dir.join("test-ca.pem");
        std::fs::write(&file, cert.to_pem().map_err(tls)?).map_err(tls)?;
        Ok(Self { key, cert, file })
    }

    /// The CA certificate's file: give it to a process as `SSL_CERT_FILE`.
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// A server certificate of `kind`, with its key, as PEM.
    fn server(&self, kind: ServerCert) -> Result<(Vec<u8>, Vec<u8>), HarnessError> {
        let key = new_key()?;
        let host = if kind == ServerCert::OtherHost { "other.example" } else { "localhost" };
        let (from, until) = match kind {
            ServerCert::Expired => (
                Asn1Time::from_str("20200101000000Z").map_err(tls)?,
                Asn1Time::from_str("20200102000000Z").map_err(tls)?,
            ),
            _ => (Asn1Time::days_from_now(0).map_err(tls)?, Asn1Time::days_from_now(1).map_err(tls)?),
        };
        let mut b = builder(&key, host, Some(self.cert.subject_name()), &from, &until)?;
        let san = SubjectAlternativeName::new()
            .dns(host)
            .build(&b.x509v3_context(Some(&self.cert), None))
            .map_err(tls)?;
        b.append_extension(san).map_err(tls)?;
        b.sign(&self.key, MessageDigest::sha256()).map_err(tls)?;
        let cert = b.build().to_pem().map_err(tls)?;
        Ok((cert, key.private_key_to_pem_pkcs8().map_err(tls)?))
    }
}

/// A running terminator: `https://localhost:<port>` in front of a plain upstream; stops when
/// dropped.
pub struct TlsProxy {
    url: String,
    task: tokio::task::JoinHandle<()>,
}

impl TlsProxy {
    /// Terminates TLS with a `kind` certificate of `ca` and forwards every connection to
    /// `upstream` (`host:port`).
    pub async fn start(upstream: String, ca: &TestCa, kind: ServerCert) -> Result<Self, HarnessError> {
        let (cert, key) = ca.server(kind)?;
        let identity = native_tls::Identity::from_pkcs8(&cert, &key).map_err(tls)?;
        let acceptor =
            tokio_native_tls::TlsAcceptor::from(native_tls::TlsAcceptor::new(identity).map_err(tls)?);
        let listener = TcpListener::bind("127.0.0.1:0").await.map_err(tls)?;
        let url = format!("https://localhost:{}", listener.local_addr().map_err(tls)?.port());
        let task = tokio::spawn(async move {
            let mut connections = tokio::task::JoinSet::new();
            while let Ok((stream, _)) = listener.accept().await {
                while connections.try_join_next().is_some() {}
                let (acceptor, upstream) = (acceptor.clone(), upstream.clone());
                connections.spawn(async move {
                    // A client that refuses the certificate ends the handshake here.
                    let Ok(mut secured) = acceptor.accept(stream).await else { return };
                    let Ok(mut plain) = TcpStream::connect(upstream).await else { return };
                    let _ = tokio::io::copy_bidirectional(&mut secured, &mut plain).await;
                });
            }
        });
        Ok(Self { url, task })
    }

    /// `https://localhost:<port>`.
    pub fn url(&self) -> &str {
        &self.url
    }
}

impl Drop for TlsProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}
