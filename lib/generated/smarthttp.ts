import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { ExitStatus as _gitaly_ExitStatus, ExitStatus__Output as _gitaly_ExitStatus__Output } from './gitaly/ExitStatus.js';
import type { InfoRefsRequest as _gitaly_InfoRefsRequest, InfoRefsRequest__Output as _gitaly_InfoRefsRequest__Output } from './gitaly/InfoRefsRequest.js';
import type { InfoRefsResponse as _gitaly_InfoRefsResponse, InfoRefsResponse__Output as _gitaly_InfoRefsResponse__Output } from './gitaly/InfoRefsResponse.js';
import type { OperationMsg as _gitaly_OperationMsg, OperationMsg__Output as _gitaly_OperationMsg__Output } from './gitaly/OperationMsg.js';
import type { PackfileNegotiationStatistics as _gitaly_PackfileNegotiationStatistics, PackfileNegotiationStatistics__Output as _gitaly_PackfileNegotiationStatistics__Output } from './gitaly/PackfileNegotiationStatistics.js';
import type { PostReceivePackRequest as _gitaly_PostReceivePackRequest, PostReceivePackRequest__Output as _gitaly_PostReceivePackRequest__Output } from './gitaly/PostReceivePackRequest.js';
import type { PostReceivePackResponse as _gitaly_PostReceivePackResponse, PostReceivePackResponse__Output as _gitaly_PostReceivePackResponse__Output } from './gitaly/PostReceivePackResponse.js';
import type { PostUploadPackWithSidechannelRequest as _gitaly_PostUploadPackWithSidechannelRequest, PostUploadPackWithSidechannelRequest__Output as _gitaly_PostUploadPackWithSidechannelRequest__Output } from './gitaly/PostUploadPackWithSidechannelRequest.js';
import type { PostUploadPackWithSidechannelResponse as _gitaly_PostUploadPackWithSidechannelResponse, PostUploadPackWithSidechannelResponse__Output as _gitaly_PostUploadPackWithSidechannelResponse__Output } from './gitaly/PostUploadPackWithSidechannelResponse.js';
import type { Repository as _gitaly_Repository, Repository__Output as _gitaly_Repository__Output } from './gitaly/Repository.js';
import type { SmartHTTPServiceClient as _gitaly_SmartHTTPServiceClient, SmartHTTPServiceDefinition as _gitaly_SmartHTTPServiceDefinition } from './gitaly/SmartHTTPService.js';
import type { DescriptorProto as _google_protobuf_DescriptorProto, DescriptorProto__Output as _google_protobuf_DescriptorProto__Output } from './google/protobuf/DescriptorProto.js';
import type { EnumDescriptorProto as _google_protobuf_EnumDescriptorProto, EnumDescriptorProto__Output as _google_protobuf_EnumDescriptorProto__Output } from './google/protobuf/EnumDescriptorProto.js';
import type { EnumOptions as _google_protobuf_EnumOptions, EnumOptions__Output as _google_protobuf_EnumOptions__Output } from './google/protobuf/EnumOptions.js';
import type { EnumValueDescriptorProto as _google_protobuf_EnumValueDescriptorProto, EnumValueDescriptorProto__Output as _google_protobuf_EnumValueDescriptorProto__Output } from './google/protobuf/EnumValueDescriptorProto.js';
import type { EnumValueOptions as _google_protobuf_EnumValueOptions, EnumValueOptions__Output as _google_protobuf_EnumValueOptions__Output } from './google/protobuf/EnumValueOptions.js';
import type { ExtensionRangeOptions as _google_protobuf_ExtensionRangeOptions, ExtensionRangeOptions__Output as _google_protobuf_ExtensionRangeOptions__Output } from './google/protobuf/ExtensionRangeOptions.js';
import type { FeatureSet as _google_protobuf_FeatureSet, FeatureSet__Output as _google_protobuf_FeatureSet__Output } from './google/protobuf/FeatureSet.js';
import type { FeatureSetDefaults as _google_protobuf_FeatureSetDefaults, FeatureSetDefaults__Output as _google_protobuf_FeatureSetDefaults__Output } from './google/protobuf/FeatureSetDefaults.js';
import type { FieldDescriptorProto as _google_protobuf_FieldDescriptorProto, FieldDescriptorProto__Output as _google_protobuf_FieldDescriptorProto__Output } from './google/protobuf/FieldDescriptorProto.js';
import type { FieldOptions as _google_protobuf_FieldOptions, FieldOptions__Output as _google_protobuf_FieldOptions__Output } from './google/protobuf/FieldOptions.js';
import type { FileDescriptorProto as _google_protobuf_FileDescriptorProto, FileDescriptorProto__Output as _google_protobuf_FileDescriptorProto__Output } from './google/protobuf/FileDescriptorProto.js';
import type { FileDescriptorSet as _google_protobuf_FileDescriptorSet, FileDescriptorSet__Output as _google_protobuf_FileDescriptorSet__Output } from './google/protobuf/FileDescriptorSet.js';
import type { FileOptions as _google_protobuf_FileOptions, FileOptions__Output as _google_protobuf_FileOptions__Output } from './google/protobuf/FileOptions.js';
import type { GeneratedCodeInfo as _google_protobuf_GeneratedCodeInfo, GeneratedCodeInfo__Output as _google_protobuf_GeneratedCodeInfo__Output } from './google/protobuf/GeneratedCodeInfo.js';
import type { MessageOptions as _google_protobuf_MessageOptions, MessageOptions__Output as _google_protobuf_MessageOptions__Output } from './google/protobuf/MessageOptions.js';
import type { MethodDescriptorProto as _google_protobuf_MethodDescriptorProto, MethodDescriptorProto__Output as _google_protobuf_MethodDescriptorProto__Output } from './google/protobuf/MethodDescriptorProto.js';
import type { MethodOptions as _google_protobuf_MethodOptions, MethodOptions__Output as _google_protobuf_MethodOptions__Output } from './google/protobuf/MethodOptions.js';
import type { OneofDescriptorProto as _google_protobuf_OneofDescriptorProto, OneofDescriptorProto__Output as _google_protobuf_OneofDescriptorProto__Output } from './google/protobuf/OneofDescriptorProto.js';
import type { OneofOptions as _google_protobuf_OneofOptions, OneofOptions__Output as _google_protobuf_OneofOptions__Output } from './google/protobuf/OneofOptions.js';
import type { ServiceDescriptorProto as _google_protobuf_ServiceDescriptorProto, ServiceDescriptorProto__Output as _google_protobuf_ServiceDescriptorProto__Output } from './google/protobuf/ServiceDescriptorProto.js';
import type { ServiceOptions as _google_protobuf_ServiceOptions, ServiceOptions__Output as _google_protobuf_ServiceOptions__Output } from './google/protobuf/ServiceOptions.js';
import type { SourceCodeInfo as _google_protobuf_SourceCodeInfo, SourceCodeInfo__Output as _google_protobuf_SourceCodeInfo__Output } from './google/protobuf/SourceCodeInfo.js';
import type { UninterpretedOption as _google_protobuf_UninterpretedOption, UninterpretedOption__Output as _google_protobuf_UninterpretedOption__Output } from './google/protobuf/UninterpretedOption.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  gitaly: {
    ExitStatus: MessageTypeDefinition<_gitaly_ExitStatus, _gitaly_ExitStatus__Output>
    InfoRefsRequest: MessageTypeDefinition<_gitaly_InfoRefsRequest, _gitaly_InfoRefsRequest__Output>
    InfoRefsResponse: MessageTypeDefinition<_gitaly_InfoRefsResponse, _gitaly_InfoRefsResponse__Output>
    OperationMsg: MessageTypeDefinition<_gitaly_OperationMsg, _gitaly_OperationMsg__Output>
    PackfileNegotiationStatistics: MessageTypeDefinition<_gitaly_PackfileNegotiationStatistics, _gitaly_PackfileNegotiationStatistics__Output>
    PostReceivePackRequest: MessageTypeDefinition<_gitaly_PostReceivePackRequest, _gitaly_PostReceivePackRequest__Output>
    PostReceivePackResponse: MessageTypeDefinition<_gitaly_PostReceivePackResponse, _gitaly_PostReceivePackResponse__Output>
    PostUploadPackWithSidechannelRequest: MessageTypeDefinition<_gitaly_PostUploadPackWithSidechannelRequest, _gitaly_PostUploadPackWithSidechannelRequest__Output>
    PostUploadPackWithSidechannelResponse: MessageTypeDefinition<_gitaly_PostUploadPackWithSidechannelResponse, _gitaly_PostUploadPackWithSidechannelResponse__Output>
    Repository: MessageTypeDefinition<_gitaly_Repository, _gitaly_Repository__Output>
    SmartHTTPService: SubtypeConstructor<typeof grpc.Client, _gitaly_SmartHTTPServiceClient> & { service: _gitaly_SmartHTTPServiceDefinition }
  }
  google: {
    protobuf: {
      DescriptorProto: MessageTypeDefinition<_google_protobuf_DescriptorProto, _google_protobuf_DescriptorProto__Output>
      Edition: EnumTypeDefinition
      EnumDescriptorProto: MessageTypeDefinition<_google_protobuf_EnumDescriptorProto, _google_protobuf_EnumDescriptorProto__Output>
      EnumOptions: MessageTypeDefinition<_google_protobuf_EnumOptions, _google_protobuf_EnumOptions__Output>
      EnumValueDescriptorProto: MessageTypeDefinition<_google_protobuf_EnumValueDescriptorProto, _google_protobuf_EnumValueDescriptorProto__Output>
      EnumValueOptions: MessageTypeDefinition<_google_protobuf_EnumValueOptions, _google_protobuf_EnumValueOptions__Output>
      ExtensionRangeOptions: MessageTypeDefinition<_google_protobuf_ExtensionRangeOptions, _google_protobuf_ExtensionRangeOptions__Output>
      FeatureSet: MessageTypeDefinition<_google_protobuf_FeatureSet, _google_protobuf_FeatureSet__Output>
      FeatureSetDefaults: MessageTypeDefinition<_google_protobuf_FeatureSetDefaults, _google_protobuf_FeatureSetDefaults__Output>
      FieldDescriptorProto: MessageTypeDefinition<_google_protobuf_FieldDescriptorProto, _google_protobuf_FieldDescriptorProto__Output>
      FieldOptions: MessageTypeDefinition<_google_protobuf_FieldOptions, _google_protobuf_FieldOptions__Output>
      FileDescriptorProto: MessageTypeDefinition<_google_protobuf_FileDescriptorProto, _google_protobuf_FileDescriptorProto__Output>
      FileDescriptorSet: MessageTypeDefinition<_google_protobuf_FileDescriptorSet, _google_protobuf_FileDescriptorSet__Output>
      FileOptions: MessageTypeDefinition<_google_protobuf_FileOptions, _google_protobuf_FileOptions__Output>
      GeneratedCodeInfo: MessageTypeDefinition<_google_protobuf_GeneratedCodeInfo, _google_protobuf_GeneratedCodeInfo__Output>
      MessageOptions: MessageTypeDefinition<_google_protobuf_MessageOptions, _google_protobuf_MessageOptions__Output>
      MethodDescriptorProto: MessageTypeDefinition<_google_protobuf_MethodDescriptorProto, _google_protobuf_MethodDescriptorProto__Output>
      MethodOptions: MessageTypeDefinition<_google_protobuf_MethodOptions, _google_protobuf_MethodOptions__Output>
      OneofDescriptorProto: MessageTypeDefinition<_google_protobuf_OneofDescriptorProto, _google_protobuf_OneofDescriptorProto__Output>
      OneofOptions: MessageTypeDefinition<_google_protobuf_OneofOptions, _google_protobuf_OneofOptions__Output>
      ServiceDescriptorProto: MessageTypeDefinition<_google_protobuf_ServiceDescriptorProto, _google_protobuf_ServiceDescriptorProto__Output>
      ServiceOptions: MessageTypeDefinition<_google_protobuf_ServiceOptions, _google_protobuf_ServiceOptions__Output>
      SourceCodeInfo: MessageTypeDefinition<_google_protobuf_SourceCodeInfo, _google_protobuf_SourceCodeInfo__Output>
      SymbolVisibility: EnumTypeDefinition
      UninterpretedOption: MessageTypeDefinition<_google_protobuf_UninterpretedOption, _google_protobuf_UninterpretedOption__Output>
    }
  }
}

