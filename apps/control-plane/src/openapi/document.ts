import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';

/** The OpenAPI document of the REST API, generated from the controllers' decorators. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Weir control plane')
    .setDescription('Stream processing as a service. Every error is RFC 9457 problem details (application/problem+json).')
    .setVersion('0.1.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'A tenant API key: weir_<id>_<secret>' }, 'apiKey')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'The platform admin token (WEIR_ADMIN_TOKEN)' }, 'adminToken')
    .build();
  return SwaggerModule.createDocument(app, config);
}
