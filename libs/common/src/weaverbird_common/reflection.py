"""Server reflection under both names clients use: grpc.reflection.v1 (current) and v1alpha (older).

grpcio-reflection implements only v1alpha (grpc/grpc#38576), while grpcurl, Postman and gRPC-Java
ask for v1 first. v1 is the same protocol: its reflection.proto is the v1alpha file with the package
renamed, field numbers and types unchanged, so the messages are identical on the wire. The v1alpha
servicer therefore also answers under the v1 method path, and a v1 copy of the file descriptor is
put in the pool so that reflection can describe itself under both names.
"""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from google.protobuf.descriptor import FileDescriptor
from grpc_reflection.v1alpha import reflection as v1alpha
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

__all__ = ["V1ALPHA_SERVICE_NAME", "V1_SERVICE_NAME", "enable_server_reflection", "v1_file_descriptor"]

V1ALPHA_SERVICE_NAME: str = v1alpha.SERVICE_NAME  # grpc.reflection.v1alpha.ServerReflection
V1_SERVICE_NAME = "grpc.reflection.v1.ServerReflection"

_V1ALPHA_PACKAGE = "grpc.reflection.v1alpha"
_V1_PACKAGE = "grpc.reflection.v1"
_V1_FILE = "grpc/reflection/v1/reflection.proto"


def _rename_types(message: descriptor_pb2.DescriptorProto) -> None:
    for field in message.field:
        if field.type_name.startswith(f".{_V1ALPHA_PACKAGE}."):
            field.type_name = f".{_V1_PACKAGE}." + field.type_name.removeprefix(f".{_V1ALPHA_PACKAGE}.")
    for nested in message.nested_type:
        _rename_types(nested)


def _v1_file_proto() -> descriptor_pb2.FileDescriptorProto:
    """The v1alpha reflection.proto with its package renamed to grpc.reflection.v1 (what upstream did)."""
    proto = descriptor_pb2.FileDescriptorProto()
    reflection_pb2.DESCRIPTOR.CopyToProto(proto)
    proto.name = _V1_FILE
    proto.package = _V1_PACKAGE
    proto.ClearField("options")  # the options of the published v1 file
    proto.options.go_package = "google.golang.org/grpc/reflection/grpc_reflection_v1"
    proto.options.java_multiple_files = True
    proto.options.java_package = "io.grpc.reflection.v1"
    proto.options.java_outer_classname = "ServerReflectionProto"
    for message in proto.message_type:
        _rename_types(message)
    old, new = f".{_V1ALPHA_PACKAGE}.", f".{_V1_PACKAGE}."
    for service in proto.service:
        for method in service.method:
            method.input_type = method.input_type.replace(old, new, 1)
            method.output_type = method.output_type.replace(old, new, 1)
    return proto


def v1_file_descriptor(pool: descriptor_pool.DescriptorPool | None = None) -> FileDescriptor:
    """grpc/reflection/v1/reflection.proto in `pool` (the default pool unless given), added if missing."""
    pool = pool or descriptor_pool.Default()
    try:
        return pool.FindFileByName(_V1_FILE)
    except KeyError:
        pool.AddSerializedFile(_v1_file_proto().SerializeToString())
        return pool.FindFileByName(_V1_FILE)


def enable_server_reflection(
    service_names: Iterable[str], server: grpc.aio.Server, pool: descriptor_pool.DescriptorPool | None = None
) -> None:
    """Serves reflection for `service_names` plus both reflection services, under v1 and v1alpha.

    Args:
        service_names: fully-qualified names of the services the server hosts.
        server: the grpc.aio server, before it starts.
        pool: where descriptors are looked up; the default pool (generated code) unless given.
    """
    v1_file_descriptor(pool)
    names = (*service_names, V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME)
    servicer = v1alpha.aio.ReflectionServicer(names, pool=pool)
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)
    v1_handler = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=reflection_pb2.ServerReflectionRequest.FromString,
        response_serializer=reflection_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(V1_SERVICE_NAME, {"ServerReflectionInfo": v1_handler}),)
    )
