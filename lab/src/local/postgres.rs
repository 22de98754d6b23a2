//! A throw-away PostgreSQL cluster from the local install: `initdb` + `pg_ctl` in a temp dir on a
//! free port, stopped and deleted on drop. PostgreSQL refuses to run as root, so as root it runs
//! them as user `postgres`.

use std::{path::PathBuf, process::Command};

/// A PostgreSQL cluster in a temp dir, listening on 127.0.0.1 on a free port.
pub struct PrivateCluster {
    dir: PathBuf,
    bin: PathBuf,
    port: u16,
    run_as_postgres: bool,
}

impl PrivateCluster {
    /// Creates and starts a cluster (as user `postgres` when we are root); `name` names its
    /// directory under the temp dir.
    pub fn start(name: &str) -> Result<Self, String> {
        let bin = postgres_bin_dir().ok_or("initdb not found on PATH or under /usr/lib/postgresql")?;
        let cluster = Self::in_dir(name, bin)?;
        cluster.run(
            cluster
                .command("initdb")
                .args(["-U", "postgres", "--auth=trust", "--no-sync", "-E", "UTF8", "-D"])
                .arg(cluster.data()),
        )?;
        cluster.start_again()?;
        Ok(cluster)
    }

    /// A hot standby of `primary`, streaming its WAL: a base backup taken with
    /// `pg_basebackup -R` (which writes the standby's connection to the primary), started on its
    /// own port. It serves reads and refuses writes (and LISTEN), as a real read replica does.
    pub fn standby_of(primary: &Self, name: &str) -> Result<Self, String> {
        let standby = Self::in_dir(name, primary.bin.clone())?;
        standby.run(
            standby
                .command("pg_basebackup")
                .args(["-h", "127.0.0.1", "-p", &primary.port.to_string(), "-U", "postgres"])
                .args(["-X", "stream", "-c", "fast", "-R", "-D"])
                .arg(standby.data()),
        )?;
        standby.start_again()?;
        Ok(standby)
    }

    /// A directory `name` under the temp dir, owned by `postgres` when we are root, and a port.
    fn in_dir(name: &str, bin: PathBuf) -> Result<Self, String> {
        let dir = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let cluster = Self { dir, bin, port: free_port()?, run_as_postgres: is_root() };
        if cluster.run_as_postgres {
            cluster.run(Command::new("chown").args(["-R", "postgres:"]).arg(&cluster.dir))?;
        }
        Ok(cluster)
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// Starts the server (again, after [`Self::stop`]) and waits until it accepts connections.
    pub fn start_again(&self) -> Result<(), String> {
        let options = format!("-p {} -k {} -h 127.0.0.1 -F", self.port, self.dir.display());
        self.run(
            self.command("pg_ctl")
                .args(["-w", "-o", &options, "-l"])
                .arg(self.dir.join("log"))
                .arg("-D")
                .arg(self.data())
                .arg("start"),
        )
    }

    /// Stops the server (fast: connections are closed), keeping its data for [`Self::start_again`].
    pub fn stop(&self) -> Result<(), String> {
        self.run(self.command("pg_ctl").args(["-w", "-m", "fast", "-D"]).arg(self.data()).arg("stop"))
    }

    /// The URL of its `postgres` database, as superuser `postgres` (trust auth).
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// A command for one of the server's programs, run as `postgres` when we are root.
    fn command(&self, program: &str) -> Command {
        let program = self.bin.join(program);
        if self.run_as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(program);
            c
        } else {
            Command::new(program)
        }
    }

    fn run(&self, command: &mut Command) -> Result<(), String> {
        let out = command.output().map_err(|e| format!("{command:?}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!("{command:?} failed: {}", String::from_utf8_lossy(&out.stderr).trim()))
        }
    }
}

impl Drop for PrivateCluster {
    fn drop(&mut self) {
        let data = self.dir.join("data");
        let stopped = self.run(self.command("pg_ctl").args(["-m", "immediate", "-D"]).arg(&data).arg("stop"));
        if let Err(e) = stopped {
            eprintln!("warning: could not stop the private Postgres cluster: {e}");
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn postgres_bin_dir() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .find(|dir| dir.join("initdb").is_file())
        // Where the link points (e.g. /usr/local/bin/initdb → /usr/lib/postgresql/15/bin): the
        // server's other programs (pg_basebackup) live beside the real one.
        .map(|dir| {
            std::fs::canonicalize(dir.join("initdb"))
                .ok()
                .and_then(|real| real.parent().map(PathBuf::from))
                .unwrap_or(dir)
        });
    on_path.or_else(|| {
        let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .filter(|bin| bin.join("initdb").is_file())
            .collect();
        versions.sort_by_key(|p| p.parent().and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok()));
        versions.pop()
    })
}

/// A loopback port nothing listens on right now.
pub fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    listener.local_addr().map(|a| a.port()).map_err(|e| e.to_string())
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// `url` with its path (database name) replaced by `database`.
pub fn with_database(url: &str, database: &str) -> String {
    let (base, query) = url.split_once('?').map_or((url, None), |(b, q)| (b, Some(q)));
    let authority_end = base.find("://").map_or(0, |i| i + 3);
    let base = match base[authority_end..].find('/') {
        Some(slash) => &base[..authority_end + slash],
        None => base,
    };
    match query {
        Some(q) => format!("{base}/{database}?{q}"),
        None => format!("{base}/{database}"),
    }
}

/// A fresh, empty database `name`: (re)created on the server at `server` when given, else in a
/// new private cluster (returned: it lives as long as the value). Returns its URL.
pub async fn fresh_database(
    server: Option<&str>,
    name: &str,
) -> anyhow::Result<(String, Option<PrivateCluster>)> {
    use anyhow::Context;
    use sqlx::{AssertSqlSafe, Connection, Executor, PgConnection};

    let (admin_url, cluster) = match server {
        Some(url) => (url.to_owned(), None),
        None => {
            let cluster =
                PrivateCluster::start(&format!("{name}-{}", std::process::id())).map_err(|why| {
                    anyhow::anyhow!(
                        "no Postgres: set DATABASE_URL to a server a database may be created on, or install \
                     PostgreSQL (initdb, pg_ctl) for a private one ({why})"
                    )
                })?;
            (cluster.url(), Some(cluster))
        }
    };
    let mut admin = PgConnection::connect(&admin_url)
        .await
        .context("connecting to Postgres (is it running, and may this user create databases?)")?;
    admin
        .execute(sqlx::raw_sql(AssertSqlSafe(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))))
        .await?;
    admin.execute(sqlx::raw_sql(AssertSqlSafe(format!("CREATE DATABASE {name}")))).await?;
    admin.close().await?;
    Ok((with_database(&admin_url, name), cluster))
}
