import { AssignerProtocol, type PartitionAssigner } from 'kafkajs';

/** Partitions per topic, the shape kafkajs uses in member assignments. */
export type TopicPartitions = Record<string, number[]>;

export const EXPLICIT_ASSIGNER_NAME = 'WeirExplicitAssigner';
const VERSION = 1;

export function encodeWanted(wanted: TopicPartitions): Buffer {
  return Buffer.from(JSON.stringify(wanted), 'utf8');
}

export function decodeWanted(userData: Buffer | null | undefined): TopicPartitions {
  if (!userData || userData.length === 0) return {};
  const parsed: unknown = JSON.parse(userData.toString('utf8'));
  if (typeof parsed !== 'object' || parsed === null) return {};
  const wanted: TopicPartitions = {};
  for (const [topic, partitions] of Object.entries(parsed)) {
    if (Array.isArray(partitions)) wanted[topic] = partitions.filter((p): p is number => Number.isInteger(p));
  }
  return wanted;
}

/**
 * kafkajs has no manual assign(). Each reader joins a group of its own, announces the partitions it wants in its
 * member userData, and this assigner (run by the group leader, i.e. the reader itself) hands every member exactly
 * what it asked for. Nothing is balanced and nothing is committed: the group is only the vehicle kafkajs needs.
 */
export function explicitAssigner(wanted: TopicPartitions): PartitionAssigner {
  return () => ({
    name: EXPLICIT_ASSIGNER_NAME,
    version: VERSION,
    async assign({ members }) {
      return members.map(({ memberId, memberMetadata }) => {
        const metadata = AssignerProtocol.MemberMetadata.decode(memberMetadata);
        return {
          memberId,
          memberAssignment: AssignerProtocol.MemberAssignment.encode({
            version: VERSION,
            assignment: decodeWanted(metadata?.userData),
            userData: Buffer.alloc(0),
          }),
        };
      });
    },
    protocol({ topics }) {
      return {
        name: EXPLICIT_ASSIGNER_NAME,
        metadata: AssignerProtocol.MemberMetadata.encode({ version: VERSION, topics, userData: encodeWanted(wanted) }),
      };
    },
  });
}
