"""A consumer of what `agentpact push` publishes to a broker, as an operator's service would write
one with that broker's ordinary Python client (docs/push.md §Streams): nats-py for NATS JetStream,
redis-py for Redis Streams, pika for RabbitMQ.

Usage:
  stream_consumer.py nats URL STREAM SUBJECTS LOG     consume until killed
  stream_consumer.py redis URL STREAM LOG             consume until killed
  stream_consumer.py amqp URL EXCHANGE BINDING LOG    consume until killed (an exclusive queue)
  stream_consumer.py nats-delete URL STREAM           remove what the sink made (a test's clean-up)
  stream_consumer.py redis-delete URL STREAM          likewise
  stream_consumer.py amqp-delete URL EXCHANGE         likewise

Consuming writes LOG + ".ready" once subscribed, then appends one JSON line per message to LOG,
acknowledging it once written: {"key": the idempotency key the broker carried (Nats-Msg-Id, the
entry's key field, message_id), "subject" (the routing key), "body": the JSON body}.
"""

import asyncio
import json
import sys


def ready(log):
    open(log + ".ready", "w").close()


def record(log, key, subject, body):
    with open(log, "a", encoding="utf-8") as f:
        f.write(json.dumps({"key": key, "subject": subject, "body": json.loads(body)}) + "\n")
        f.flush()


async def nats_consume(url, stream, subjects, log):
    import nats
    from nats.js.errors import NotFoundError

    nc = await nats.connect(url)
    js = nc.jetstream()
    ready(log)
    # agentpact push creates the stream at its first publish: wait for it. (A loaded machine may
    # time a request out: nats-py raises asyncio's TimeoutError, or a subclass of it.)
    while True:
        try:
            await js.stream_info(stream)
            break
        except (NotFoundError, asyncio.TimeoutError):
            await asyncio.sleep(0.1)
    sub = await js.pull_subscribe(subjects, durable="consumer", stream=stream)
    while True:
        try:
            messages = await sub.fetch(100, timeout=0.5)
        except asyncio.TimeoutError:
            continue
        for m in messages:
            record(log, (m.headers or {}).get("Nats-Msg-Id"), m.subject, m.data)
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


def redis_consume(url, stream, log):
    import redis

    r = redis.Redis.from_url(url)
    try:
        r.xgroup_create(stream, "consumer", id="0", mkstream=True)
    except redis.ResponseError as e:  # the group exists: read on
        if "BUSYGROUP" not in str(e):
            raise
    ready(log)
    while True:
        for _, entries in r.xreadgroup("consumer", "one", {stream: ">"}, count=100, block=500) or []:
            for entry_id, fields in entries:
                record(log, fields[b"key"].decode(), fields[b"subject"].decode(), fields[b"body"])
                r.xack(stream, "consumer", entry_id)


def redis_delete(url, stream):
    import redis

    r = redis.Redis.from_url(url)
    r.delete(stream, *r.scan_iter(match=stream + ":added:*"))


def amqp_consume(url, exchange, binding, log):
    import pika

    channel = pika.BlockingConnection(pika.URLParameters(url)).channel()
    # Declared alike by agentpact push: whichever comes first makes it.
    channel.exchange_declare(exchange=exchange, exchange_type="topic", durable=True)
    queue = channel.queue_declare(queue="", exclusive=True).method.queue
    channel.queue_bind(queue=queue, exchange=exchange, routing_key=binding)
    ready(log)

    def on_message(ch, method, properties, body):
        record(log, properties.message_id, method.routing_key, body)
        ch.basic_ack(delivery_tag=method.delivery_tag)

    channel.basic_consume(queue=queue, on_message_callback=on_message)
    channel.start_consuming()


def amqp_delete(url, exchange):
    import pika

    connection = pika.BlockingConnection(pika.URLParameters(url))
    connection.channel().exchange_delete(exchange=exchange)
    connection.close()


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "nats":
        asyncio.run(nats_consume(*args))
    elif command == "nats-delete":
        asyncio.run(nats_delete(*args))
    elif command == "redis":
        redis_consume(*args)
    elif command == "redis-delete":
        redis_delete(*args)
    elif command == "amqp":
        amqp_consume(*args)
    elif command == "amqp-delete":
        amqp_delete(*args)
    else:
        sys.exit(f"unknown command {command}")
    if command.endswith("-delete"):
        print("deleted")


if __name__ == "__main__":
    main()
