// Original file: protos/topology_service/classify_service.proto

export const ClassifyAction = {
  ACTION_UNSPECIFIED: 'ACTION_UNSPECIFIED',
  PROXY: 'PROXY',
} as const;

export type ClassifyAction =
  | 'ACTION_UNSPECIFIED'
  | 0
  | 'PROXY'
  | 1

export type ClassifyAction__Output = typeof ClassifyAction[keyof typeof ClassifyAction]
