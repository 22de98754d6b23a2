"""A consumer of what `agentpact push` publishes to a broker, as an operator's service would write
one with that broker's ordinary Python client (docs/push.md §Streams): nats-py for NATS JetStream.

Usage:
  stream_consumer.py nats URL STREAM SUBJECTS LOG   consume until killed
  stream_consumer.py nats-delete URL STREAM         remove the stream (a test's clean-up)

Consuming appends one JSON line per message to LOG, acknowledging it once written:
{"key": the idempotency key the broker carried (Nats-Msg-Id), "subject", "body": the JSON body,
"seq": the broker's sequence number}.
"""

import asyncio
import json
import sys


def record(log, key, subject, body, seq):
    with open(log, "a", encoding="utf-8") as f:
        f.write(json.dumps({"key": key, "subject": subject, "body": json.loads(body), "seq": seq}) + "\n")
        f.flush()


async def nats_consume(url, stream, subjects, log):
    import nats
    from nats.js.errors import NotFoundError

    nc = await nats.connect(url)
    js = nc.jetstream()
    # agentpact push creates the stream at its first publish: wait for it.
    while True:
        try:
            await js.stream_info(stream)
            break
        except NotFoundError:
            await asyncio.sleep(0.1)
    sub = await js.pull_subscribe(subjects, durable="consumer", stream=stream)
    while True:
        try:
            messages = await sub.fetch(100, timeout=0.5)
        except nats.errors.TimeoutError:
            continue
        for m in messages:
            headers = m.headers or {}
            record(log, headers.get("Nats-Msg-Id"), m.subject, m.data, m.metadata.sequence.stream)
            await m.ack()


async def nats_delete(url, stream):
    import nats
    from nats.js.errors import NotFoundError

    nc = await nats.connect(url)
    try:
        await nc.jetstream().delete_stream(stream)
    except NotFoundError:
        pass
    await nc.close()
    print("deleted")


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "nats":
        asyncio.run(nats_consume(*args))
    elif command == "nats-delete":
        asyncio.run(nats_delete(*args))
    else:
        sys.exit(f"unknown command {command}")


if __name__ == "__main__":
    main()
