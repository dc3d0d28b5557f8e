import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';

/** The OpenAPI document of the REST API, generated from the controllers' decorators. */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Weir control plane')
    .setDescription('Stream processing as a service. Every error is RFC 9457 problem details (application/problem+json).')
    .setVersion('0.1.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'weir_<id>_<secret>', description: 'A tenant API key' }, 'apiKey')
    .addBearerAuth({ type: 'http', scheme: 'bearer', bearerFormat: 'opaque', description: 'The platform admin token (WEIR_ADMIN_TOKEN)' }, 'adminToken')
    .build();
  return SwaggerModule.createDocument(app, config);
}
