// Original file: protos/topology_service/classify_service.proto

export const ClassifyType = {
  UNSPECIFIED: 'UNSPECIFIED',
  FIRST_CELL: 'FIRST_CELL',
  SESSION_PREFIX: 'SESSION_PREFIX',
  CELL_ID: 'CELL_ID',
} as const;

export type ClassifyType =
  | 'UNSPECIFIED'
  | 0
  | 'FIRST_CELL'
  | 1
  | 'SESSION_PREFIX'
  | 2
  | 'CELL_ID'
  | 3

export type ClassifyType__Output = typeof ClassifyType[keyof typeof ClassifyType]
