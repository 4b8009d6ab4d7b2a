"""Drives a FlashVec server with the official Qdrant Python client in REST mode.

Usage: python qdrant_client_check.py URL
Exits non-zero with a message on the first mismatch. Run by QdrantClientIT.
"""
import importlib.metadata
import math
import sys
import uuid

from qdrant_client import QdrantClient, models
from qdrant_client.common.version_check import get_server_version, is_compatible


def check(cond, msg):
    if not cond:
        raise SystemExit("FAILED: " + msg)


def main(url):
    # The check a client makes at start-up (check_compatibility=True): no warning for FlashVec.
    client_version = importlib.metadata.version("qdrant-client")
    server_version = get_server_version(url, {}, None, 30)
    check(is_compatible(client_version, server_version),
          f"client {client_version} finds server version {server_version} incompatible")
    client = QdrantClient(url=url, prefer_grpc=False, timeout=30, check_compatibility=False)
    name = "qdrant_client_check"
    if client.collection_exists(name):
        client.delete_collection(name)
    check(client.create_collection(
        name, vectors_config=models.VectorParams(size=4, distance=models.Distance.COSINE)),
        "create_collection returned false")
    check(client.collection_exists(name), "collection_exists after create")
    names = [c.name for c in client.get_collections().collections]
    check(name in names, f"get_collections lists the collection: {names}")

    u = str(uuid.UUID(int=42))
    points = [
        models.PointStruct(id=1, vector=[1.0, 0.0, 0.0, 0.0], payload={"city": "Berlin", "n": 1}),
        models.PointStruct(id=2, vector=[0.0, 1.0, 0.0, 0.0], payload={"city": "London", "n": 2}),
        models.PointStruct(id=u, vector=[0.0, 0.0, 1.0, 0.0], payload={"city": "Paris"}),
    ]
    res = client.upsert(name, points=points, wait=True)
    check(res.status == models.UpdateStatus.COMPLETED, f"upsert status {res.status}")
    # Columnar batch form.
    # Aliases: a collection route through an alias, listed, dropped.
    client.update_collection_aliases(change_aliases_operations=[
        models.CreateAliasOperation(create_alias=models.CreateAlias(collection_name=name, alias_name=name + "_alias"))])
    check([a.alias_name for a in client.get_aliases().aliases] == [name + "_alias"], "get_aliases")
    check([a.alias_name for a in client.get_collection_aliases(name).aliases] == [name + "_alias"],
          "get_collection_aliases")
    check(client.count(name + "_alias").count == 3, "count through the alias")
    client.update_collection_aliases(change_aliases_operations=[
        models.DeleteAliasOperation(delete_alias=models.DeleteAlias(alias_name=name + "_alias"))])
    check(client.get_aliases().aliases == [], "alias deleted")
    client.upsert(name, points=models.Batch(ids=[3, 4], vectors=[[0.0, 0.0, 0.0, 1.0], [1.0, 1.0, 0.0, 0.0]],
                                            payloads=[{"city": "Rome"}, {"city": "Oslo"}]), wait=True)

    info = client.get_collection(name)
    check(info.points_count == 5, f"points_count {info.points_count}")
    check(info.config.params.vectors.size == 4, "vector size in config")
    check(client.count(name, exact=True).count == 5, "count")

    cluster = client.collection_cluster_info(name)
    check(cluster.shard_count == len(cluster.local_shards) and not cluster.remote_shards,
          f"collection_cluster_info of a standalone server: {cluster}")
    check(sum(s.points_count for s in cluster.local_shards) == 5, "points per shard sum to 5")

    got = client.retrieve(name, ids=[1, u], with_payload=True, with_vectors=True)
    check(len(got) == 2, f"retrieve returned {len(got)}")
    by_id = {str(p.id): p for p in got}
    check(by_id["1"].payload == {"city": "Berlin", "n": 1}, f"payload {by_id['1'].payload}")
    check(by_id[u].vector is not None and abs(by_id[u].vector[2] - 1.0) < 1e-6, "vector returned")

    hits = client.query_points(name, query=[0.9, 0.1, 0.0, 0.0], limit=3, with_payload=True).points
    check([h.id for h in hits][:2] == [1, 4], f"query_points order {[h.id for h in hits]}")
    check(hits[0].payload["city"] == "Berlin", "query payload")
    check(abs(hits[0].score - 0.9 / math.sqrt(0.82)) < 1e-4, f"cosine score {hits[0].score}")

    hits = client.query_points(name, query=models.NearestQuery(nearest=[0.0, 1.0, 0.0, 0.0]), limit=1).points
    check(hits[0].id == 2, "nearest query")
    # by id: the points like it, without the point itself (Qdrant excludes referenced ids)
    hits = client.query_points(name, query=1, limit=3).points
    check(1 not in [h.id for h in hits] and len(hits) == 3, f"query by id {[h.id for h in hits]}")

    batch = client.query_batch_points(name, requests=[
        models.QueryRequest(query=[1.0, 0.0, 0.0, 0.0], limit=1),
        models.QueryRequest(query=[0.0, 0.0, 1.0, 0.0], limit=1),
    ])
    check([r.points[0].id for r in batch] == [1, u], "query batch")

    hits = client.query_points(name, query=[1.0, 0.0, 0.0, 0.0], limit=10, score_threshold=0.5).points
    check({h.id for h in hits} == {1, 4}, f"score_threshold {[h.id for h in hits]}")

    page, nxt = client.scroll(name, limit=2, with_payload=True)
    seen = [p.id for p in page]
    while nxt is not None:
        page, nxt = client.scroll(name, limit=2, offset=nxt)
        seen += [p.id for p in page]
    check(seen == [1, 2, 3, 4, u], f"scroll order {seen}")

    # Payload-only updates keep the vector.
    client.set_payload(name, payload={"country": "DE"}, points=[1], wait=True)
    p1 = client.retrieve(name, ids=[1], with_payload=True, with_vectors=True)[0]
    check(p1.payload == {"city": "Berlin", "n": 1, "country": "DE"}, f"set_payload merged: {p1.payload}")
    check(abs(p1.vector[0] - 1.0) < 1e-6, "set_payload kept the vector")
    client.overwrite_payload(name, payload={"only": True}, points=[1], wait=True)
    check(client.retrieve(name, ids=[1])[0].payload == {"only": True}, "overwrite_payload")
    client.delete_payload(name, keys=["only"], points=[1], wait=True)
    check(client.retrieve(name, ids=[1])[0].payload == {}, "delete_payload")
    client.set_payload(name, payload={"a": 1}, points=[3], wait=True)
    client.clear_payload(name, points_selector=[3], wait=True)
    check(client.retrieve(name, ids=[3])[0].payload in ({}, None), "clear_payload")
    check(client.count(name).count == 5, "payload updates do not change the count")
    try:
        client.set_payload(name, payload={"a": 1}, points=[12345], wait=True)
        check(False, "set_payload of an unknown id accepted")
    except Exception as e:  # UnexpectedResponse 404, as from Qdrant
        check("12345" in str(e) and "404" in str(e), f"set_payload of an unknown id: {e}")

    # Vectors only, and several operations in one request.
    client.update_vectors(name, points=[models.PointVectors(id=3, vector=[0.0, 0.0, 0.6, 0.8])], wait=True)
    p3 = client.retrieve(name, ids=[3], with_payload=True, with_vectors=True)[0]
    check(abs(p3.vector[3] - 0.8) < 1e-6, f"update_vectors changed the vector {p3.vector}")
    res = client.batch_update_points(name, update_operations=[
        models.UpsertOperation(upsert=models.PointsList(points=[
            models.PointStruct(id=20, vector=[0.1, 0.2, 0.3, 0.4], payload={"b": 1})])),
        models.SetPayloadOperation(set_payload=models.SetPayload(payload={"c": 2}, points=[20])),
        models.DeleteOperation(delete=models.PointIdsList(points=[20])),
    ], wait=True)
    check(len(res) == 3 and all(r.status == models.UpdateStatus.COMPLETED for r in res), f"batch {res}")
    check(client.retrieve(name, ids=[20]) == [], "batch applied in order")

    # Payload indexes, filters over them, order_by, BM25 text queries and hybrid fusion.
    client.upsert(name, points=[
        models.PointStruct(id=10, vector=[0.5, 0.5, 0.0, 0.0], payload={"city": "Oslo", "n": 10, "body": "quick brown fox"}),
        models.PointStruct(id=11, vector=[0.0, 0.5, 0.5, 0.0], payload={"city": "Rome", "n": 11, "body": "lazy dog sleeps"}),
    ], wait=True)
    client.create_payload_index(name, field_name="city", field_schema=models.PayloadSchemaType.KEYWORD, wait=True)
    client.create_payload_index(name, field_name="n", field_schema=models.PayloadSchemaType.INTEGER, wait=True)
    client.create_payload_index(
        name, field_name="body",
        field_schema=models.TextIndexParams(type="text", tokenizer=models.TokenizerType.WORD, lowercase=True),
        wait=True)
    schema = client.get_collection(name).payload_schema
    check(set(schema) == {"city", "n", "body"}, f"payload_schema {schema}")
    check(schema["city"].data_type == models.PayloadSchemaType.KEYWORD, f"keyword index {schema['city']}")
    check(schema["body"].params.tokenizer == models.TokenizerType.WORD, f"text params {schema['body']}")
    f = models.Filter(must=[models.FieldCondition(key="city", match=models.MatchValue(value="Oslo"))])
    check(client.count(name, count_filter=f).count == 2, "count over a keyword index")
    f = models.Filter(must=[models.FieldCondition(key="body", match=models.MatchText(text="FOX quick"))])
    check([p.id for p in client.scroll(name, scroll_filter=f)[0]] == [10], "full-text match")
    page, _ = client.scroll(name, order_by=models.OrderBy(key="n", direction=models.Direction.DESC), limit=2)
    check([p.id for p in page] == [11, 10], f"order_by {[p.id for p in page]}")
    # Text queries pass through to the server as documents (no local inference).
    server_side = QdrantClient(url=url, cloud_inference=True, timeout=30, check_compatibility=False)
    hits = server_side.query_points(
        name, query=models.Document(text="lazy dog", model="qdrant/bm25"), using="body", limit=5).points
    check([h.id for h in hits] == [11], f"BM25 text query {[h.id for h in hits]}")
    hits = server_side.query_points(
        name,
        prefetch=[
            models.Prefetch(query=[0.0, 0.5, 0.5, 0.0], limit=3),
            models.Prefetch(query=models.Document(text="dog", model="qdrant/bm25"), using="body", limit=3),
        ],
        query=models.FusionQuery(fusion=models.Fusion.RRF), limit=2).points
    check(hits[0].id == 11, f"hybrid RRF puts the point both lists rank first first {[h.id for h in hits]}")
    client.delete_payload_index(name, field_name="n", wait=True)
    check("n" not in client.get_collection(name).payload_schema, "payload index dropped")
    client.delete(name, points_selector=models.PointIdsList(points=[10, 11]), wait=True)

    client.delete(name, points_selector=models.PointIdsList(points=[2, u]), wait=True)
    check(client.count(name).count == 3, "count after delete")
    check(client.retrieve(name, ids=[2]) == [], "deleted point is gone")

    try:
        client.upsert(name, points=[models.PointStruct(id=9, vector=[1.0, 2.0])], wait=True)
        check(False, "wrong dimension accepted")
    except Exception as e:  # UnexpectedResponse
        check("expected dim: 4, got 2" in str(e), f"dimension error message: {e}")

    check(client.delete_collection(name), "delete_collection")
    check(not client.collection_exists(name), "collection gone")

    # migrate from qdrant-client's local mode: its config as GET shows it (max_optimization_threads 1,
    # wal_retain_closed 1, indexing_threshold 20000) and its points (local mode keeps no payload index)
    local = QdrantClient(":memory:")
    local.create_collection("migrated", vectors_config=models.VectorParams(size=4, distance=models.Distance.COSINE))
    local.upsert("migrated", points=[
        models.PointStruct(id=i, vector=[i + 1.0, 2.0, 3.0, 4.0], payload={"k": i}) for i in range(50)])
    local.migrate(client, collection_names=["migrated"], recreate_on_collision=True)
    check(client.count("migrated").count == 50, "migrated points")
    migrated = client.get_collection("migrated")
    check(migrated.config.optimizer_config.max_optimization_threads == 1,
          f"migrated max_optimization_threads {migrated.config.optimizer_config}")
    check(migrated.config.wal_config.wal_retain_closed == 1, f"migrated wal config {migrated.config.wal_config}")
    want = [p.id for p in local.query_points("migrated", query=[1.0, 2.0, 3.0, 4.0], limit=5).points]
    got = [p.id for p in client.query_points("migrated", query=[1.0, 2.0, 3.0, 4.0], limit=5).points]
    check(got == want, f"migrated search {got} != {want}")
    check(client.delete_collection("migrated"), "delete migrated")
    print("qdrant-client check passed")


if __name__ == "__main__":
    main(sys.argv[1])
