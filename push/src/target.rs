//! Which URLs the server may call. A webhook is a request the server makes on a stranger's say-so,
//! so a target that reaches the operator's own network (loopback, private ranges, link-local
//! cloud metadata, carrier NAT, ...) is refused unless the operator opened its range
//! (`WEBHOOK_ALLOW_TARGETS`). The check runs at registration and again at every connection
//! ([`Targets::resolver`]), so a name that later resolves elsewhere (DNS rebinding) is refused too.

use std::{
    net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr},
    sync::Arc,
};

use ipnet::IpNet;
use url::{Host, Url};

/// Longest target URL a subscription takes, in bytes.
pub const MAX_URL: usize = 2048;

/// The ranges opened beyond the public internet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Targets {
    allowed: Vec<IpNet>,
}

/// Why a target URL is refused; each sentence says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// Not a URL.
    #[error("the webhook URL is not a URL ({0}): give an absolute http:// or https:// URL")]
    Malformed(String),
    /// Longer than [`MAX_URL`] bytes.
    #[error(
        "the webhook URL is {0} bytes long, more than the {MAX_URL} a subscription takes: give a shorter URL"
    )]
    TooLong(usize),
    /// Another scheme than http(s).
    #[error("the webhook URL's scheme is {0}: only http:// and https:// targets are called")]
    Scheme(String),
    /// Credentials in the URL would be sent to every redirect and stored in plain.
    #[error(
        "the webhook URL holds a user name or password: authenticate the server by its signature instead"
    )]
    Credentials,
    /// The host resolves to an address in a range the operator has not opened.
    #[error(
        "the webhook URL's host resolves to {0}, a private, loopback or otherwise internal address: \
         give a public URL (the operator opens internal ranges with WEBHOOK_ALLOW_TARGETS)"
    )]
    Internal(IpAddr),
    /// The name does not resolve.
    #[error("the webhook URL's host {0} does not resolve: check the name")]
    Unresolved(String),
}

impl Targets {
    /// Reads a comma-separated list of CIDR ranges (`127.0.0.1/32,10.0.0.0/8`; a bare address is
    /// its own range); an error names the entry that is neither.
    pub fn parse(list: &str) -> Result<Self, String> {
        let mut allowed = Vec::new();
        for entry in list.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            let net = entry
                .parse::<IpNet>()
                .or_else(|_| entry.parse::<IpAddr>().map(IpNet::from))
                .map_err(|_| format!("{entry:?} is not a CIDR range or an IP address (e.g. 127.0.0.1/32)"))?;
            allowed.push(net);
        }
        Ok(Self { allowed })
    }

    /// Whether the server may connect to `ip`. An IPv6 address that carries an IPv4 one
    /// ([`embedded_v4`]) is held to the IPv4 address's policy, so no IPv6 spelling reaches a range
    /// the plain IPv4 address could not (opening the IPv6 form itself also opens it).
    pub fn permits(&self, ip: IpAddr) -> bool {
        let opened = self.allowed.iter().any(|net| net.contains(&ip));
        let public = match ip {
            IpAddr::V6(v6) if !v6.is_loopback() && !v6.is_unspecified() => match embedded_v4(v6) {
                Some(v4) => return opened || self.permits(IpAddr::V4(v4)),
                None => !internal_v6(v6),
            },
            _ => !is_internal(ip),
        };
        public || opened
    }

    /// Checks `url`'s form, and its host when it is an address; returns the parsed URL.
    pub fn check_form(&self, url: &str) -> Result<Url, TargetError> {
        if url.len() > MAX_URL {
            return Err(TargetError::TooLong(url.len()));
        }
        let parsed = Url::parse(url).map_err(|e| TargetError::Malformed(e.to_string()))?;
        if !matches!(parsed.scheme(), "http" | "https") {
            return Err(TargetError::Scheme(parsed.scheme().to_owned()));
        }
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(TargetError::Credentials);
        }
        match parsed.host() {
            Some(Host::Ipv4(ip)) => self.address(IpAddr::V4(ip))?,
            Some(Host::Ipv6(ip)) => self.address(IpAddr::V6(ip))?,
            Some(Host::Domain(_)) => {}
            None => return Err(TargetError::Malformed("no host".into())),
        }
        Ok(parsed)
    }

    /// Checks `url` completely: its form, and every address its host resolves to now.
    pub async fn check(&self, url: &str) -> Result<Url, TargetError> {
        let parsed = self.check_form(url)?;
        if let Some(Host::Domain(name)) = parsed.host() {
            let port = parsed.port_or_known_default().unwrap_or(443);
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((name, port))
                .await
                .map_err(|_| TargetError::Unresolved(name.to_owned()))?
                .collect();
            if addrs.is_empty() {
                return Err(TargetError::Unresolved(name.to_owned()));
            }
            for addr in addrs {
                self.address(addr.ip())?;
            }
        }
        Ok(parsed)
    }

    fn address(&self, ip: IpAddr) -> Result<(), TargetError> {
        if self.permits(ip) { Ok(()) } else { Err(TargetError::Internal(ip)) }
    }

    /// A DNS resolver for the HTTP client that keeps only permitted addresses (none left: the
    /// connection fails), so what was checked at registration still holds at delivery.
    pub fn resolver(&self) -> Arc<dyn reqwest::dns::Resolve> {
        Arc::new(Resolver(self.clone()))
    }
}

struct Resolver(Targets);

impl reqwest::dns::Resolve for Resolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let targets = self.0.clone();
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let permitted: Vec<SocketAddr> =
                found.iter().copied().filter(|a| targets.permits(a.ip())).collect();
            match (permitted.is_empty(), found.first()) {
                (false, _) => Ok(Box::new(permitted.into_iter()) as reqwest::dns::Addrs),
                (true, Some(refused)) => Err(Box::new(TargetError::Internal(refused.ip())) as _),
                (true, None) => Err(Box::new(TargetError::Unresolved(host)) as _),
            }
        })
    }
}

/// Whether `ip` reaches something other than the public internet: an IPv6 address carrying an
/// IPv4 one ([`embedded_v4`]) is judged by the IPv4 address.
pub fn is_internal(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => internal_v4(v4),
        IpAddr::V6(v6) if v6.is_loopback() || v6.is_unspecified() => true,
        IpAddr::V6(v6) => embedded_v4(v6).map_or_else(|| internal_v6(v6), internal_v4),
    }
}

/// The IPv4 address an IPv6 form carries, which is where a packet to it ends up (through a
/// translator, a tunnel or the host's own stack): IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible
/// `::a.b.c.d`, IPv4-translated `::ffff:0:a.b.c.d` (RFC 2765), NAT64 `64:ff9b::a.b.c.d`
/// (RFC 6052), 6to4 `2002:aabb:ccdd::/48` (RFC 3056) and Teredo `2001:0::/32` (RFC 4380: the
/// client's address, stored inverted in the last 32 bits). `::` and `::1` are IPv6's own.
pub fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let last = Ipv4Addr::from((u32::from(s[6]) << 16) | u32::from(s[7]));
    match s {
        [0, 0, 0, 0, 0, 0 | 0xffff, ..] => Some(last),
        [0, 0, 0, 0, 0xffff, 0, ..] => Some(last),
        [0x0064, 0xff9b, 0, 0, 0, 0, ..] => Some(last),
        [0x2002, high, low, ..] => Some(Ipv4Addr::from((u32::from(high) << 16) | u32::from(low))),
        [0x2001, 0, ..] => Some(Ipv4Addr::from(!u32::from(last))),
        _ => None,
    }
}

fn internal_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // carrier-grade NAT, 100.64.0.0/10
        || (a == 198 && (b == 18 || b == 19)) // benchmarking, 198.18.0.0/15
        || (a == 192 && b == 0 && ip.octets()[2] == 0) // IETF protocol assignments, 192.0.0.0/24
        || a >= 240 // reserved
}

fn internal_v6(ip: Ipv6Addr) -> bool {
    let first = ip.segments()[0];
    ip.is_unspecified()
        || ip.is_loopback()
        || ip.is_multicast()
        || ip.is_unique_local()
        || ip.is_unicast_link_local()
        || (first & 0xffc0) == 0xfec0 // site-local (deprecated)
        || first == 0x2001 && ip.segments()[1] == 0x0db8 // documentation
        || first == 0x0064 && ip.segments()[1] == 0xff9b // local-use NAT64, 64:ff9b:1::/48
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn internal_ranges_are_closed_until_opened() {
        let closed = Targets::default();
        for url in [
            "http://127.0.0.1:8080/hook",
            "http://10.1.2.3/",
            "http://172.16.0.1/",
            "http://192.168.1.1/",
            "http://169.254.169.254/latest/meta-data",
            "http://100.64.0.1/",
            "http://0.0.0.0/",
            "http://[::1]/",
            "http://[fd00::1]/",
            "http://[fe80::1]/",
            "http://[::ffff:127.0.0.1]/",
        ] {
            assert!(matches!(closed.check_form(url), Err(TargetError::Internal(_))), "{url}");
        }
        assert!(closed.check_form("https://93.184.215.14/hook").is_ok());
        let open = Targets::parse("127.0.0.1/32, ::1").expect("ranges");
        assert!(open.check_form("http://127.0.0.1:9/hook").is_ok());
        assert!(open.check_form("http://[::1]:9/hook").is_ok());
        assert!(
            matches!(open.check_form("http://127.0.0.2/"), Err(TargetError::Internal(_))),
            "only what was opened"
        );
    }

    #[test]
    fn only_plain_http_urls_without_credentials() {
        let t = Targets::default();
        assert!(matches!(t.check_form("ftp://example.com/"), Err(TargetError::Scheme(_))));
        assert!(matches!(t.check_form("https://u:p@example.com/"), Err(TargetError::Credentials)));
        assert!(matches!(t.check_form("not a url"), Err(TargetError::Malformed(_))));
        assert!(Targets::parse("10.0.0.0/8,nonsense").is_err());
    }

    /// Every IPv6 form that carries an IPv4 address, spelling loopback, a private and a
    /// metadata address: each refused as the IPv4 address is, and opened only as it is.
    #[test]
    fn an_ipv6_form_of_an_ipv4_address_is_held_to_the_ipv4_policy() {
        let closed = Targets::default();
        let forms = [
            ("[::127.0.0.1]", "127.0.0.1"),                          // IPv4-compatible
            ("[::ffff:0:7f00:1]", "127.0.0.1"),                      // IPv4-translated
            ("[2002:7f00:1::]", "127.0.0.1"),                        // 6to4
            ("[2002:a00:7::1]", "10.0.0.7"),                         // 6to4, private
            ("[64:ff9b::a9fe:a9fe]", "169.254.169.254"),             // NAT64, cloud metadata
            ("[2001:0:4136:e378:8000:63bf:80ff:fffe]", "127.0.0.1"), // Teredo client (inverted)
            ("[::ffff:c0a8:101]", "192.168.1.1"),                    // IPv4-mapped
        ];
        for (host, v4) in forms {
            let url = format!("http://{host}:9/hook");
            let refused = closed.check_form(&url);
            assert!(matches!(refused, Err(TargetError::Internal(_))), "{url}: {refused:?}");
            let v6: Ipv6Addr = host.trim_matches(['[', ']']).parse().expect("an IPv6 address");
            assert_eq!(embedded_v4(v6), v4.parse().ok(), "{host}");
        }
        // A public IPv4 address through NAT64 or 6to4 is public.
        assert!(closed.check_form("http://[64:ff9b::5db8:d70e]/").is_ok());
        assert!(closed.check_form("http://[2002:5db8:d70e::1]/").is_ok());
        // Opening 127.0.0.1 opens its IPv6 spellings too, and nothing else.
        let open = Targets::parse("127.0.0.1/32").expect("a range");
        assert!(open.check_form("http://[::ffff:0:7f00:1]:9/").is_ok());
        assert!(matches!(open.check_form("http://[2002:7f00:2::]/"), Err(TargetError::Internal(_))));
        assert!(
            matches!(open.check_form("http://[::1]/"), Err(TargetError::Internal(_))),
            "::1 is not 127.0.0.1"
        );
    }

    #[tokio::test]
    async fn a_name_is_held_to_what_it_resolves_to() {
        let closed = Targets::default();
        assert!(matches!(closed.check("http://localhost:9/hook").await, Err(TargetError::Internal(_))));
    }
}
